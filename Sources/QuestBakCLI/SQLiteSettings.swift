import CSQLiteConfig

/// Settings of SQLite that `questbak` makes for its whole process before it opens anything. A
/// process setting, so the CLI's and not the library's: an app that embeds the library keeps
/// SQLite as it configured it (and may have opened connections already, after which SQLite
/// takes no setting).
enum SQLiteSettings {
    /// Turns SQLite's memory statistics off (`SQLITE_CONFIG_MEMSTATUS`). With them on, each of
    /// SQLite's allocations and frees takes one process-wide mutex to update its counts, and
    /// questbak's commands run SQLite on two threads at once (a restore's inserts beside its
    /// read-back proof, an export's two readers): 100k records of another app, nine alternated
    /// rounds, import 0.346 → 0.326 s and export 0.112 → 0.102 s (docs/performance.md). questbak
    /// reads none of the counts (`sqlite3_memory_used`, `sqlite3_status`), and no soft heap limit
    /// is set, which needs them. Returns whether SQLite took it: false once SQLite is initialized.
    @discardableResult
    static func turnOffMemoryStatistics() -> Bool {
        questbak_disable_memory_statistics() == SQLITE_OK
    }
}
