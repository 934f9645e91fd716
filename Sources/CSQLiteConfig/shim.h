#ifndef QUESTBAK_CSQLITECONFIG_SHIM_H
#define QUESTBAK_CSQLITECONFIG_SHIM_H
#include <sqlite3.h>

/// sqlite3_db_config() is variadic, which Swift cannot call. A restore replays a store's
/// statements in their order, triggers included, and turns triggers off while it puts the rows
/// back: a trigger firing on the restore's own inserts would change what was archived.
/// Returns SQLite's result code; `enabled` is 0 or 1.
static inline int questbak_set_triggers_enabled(sqlite3 *db, int enabled) {
    int now = -1;
    int code = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, enabled, &now);
    return code == SQLITE_OK && now == enabled ? SQLITE_OK : (code == SQLITE_OK ? SQLITE_ERROR : code);
}

/// sqlite3_config() is variadic too. Turns off SQLite's memory statistics for the process: with
/// them on, every allocation and free SQLite makes takes one global mutex to count it, on every
/// thread (a restore's inserts beside its read-back proof, a merge's matching beside its checks).
/// Only before SQLite is initialized (before the first connection); SQLITE_MISUSE after.
static inline int questbak_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
