import CLibcExtras

/// Settings of glibc's malloc that a command makes before its work, where the defaults make its
/// peak memory depend on the threads' timing. A process setting, so the CLI's and not the
/// library's: an app that embeds the library keeps its own allocator's settings.
enum MallocSettings {
    /// The size from which glibc's malloc maps a block of its own, given back to the system when
    /// freed: its default, 128 KB.
    static let largeBlock: Int32 = 128 * 1024

    /// Keeps every block of `largeBlock` or more out of malloc's heaps, for the rest of the
    /// process. By default glibc raises that size each time such a block is freed (up to 32 MB),
    /// so that later large blocks come from the heaps instead, where what is freed stays
    /// resident, as free space of the heap of the thread that freed it. A merge frees large
    /// blocks on four threads (the archive's reader, the restore's second core, its own, and the
    /// report's writer, which a dispatch queue runs on whichever pooled thread is free): when
    /// the size is raised, and on which thread's heap the next large blocks land, depends on the
    /// threads' timing. The same build merging 100k estimations into a second device peaked at
    /// 54.4–57.7 MB over seven runs; with the size held at its default, at 50.6–52.9 MB, no
    /// slower (docs/performance.md). It changes where a block's memory comes from, never what
    /// is allocated. Returns whether malloc took the setting (false where it is not glibc's).
    @discardableResult
    static func keepLargeBlocksMapped() -> Bool {
        questbak_hold_mmap_threshold(largeBlock) == 1
    }
}
