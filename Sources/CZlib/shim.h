#ifndef QUESTBAK_CZLIB_SHIM_H
#define QUESTBAK_CZLIB_SHIM_H
#include <zlib.h>
#endif
