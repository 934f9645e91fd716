#ifndef QUESTBAK_CZSTD_SHIM_H
#define QUESTBAK_CZSTD_SHIM_H
#include <zstd.h>
#endif
