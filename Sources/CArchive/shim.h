#ifndef QUESTBAK_CARCHIVE_SHIM_H
#define QUESTBAK_CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>
#endif
