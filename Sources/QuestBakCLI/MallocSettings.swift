#if canImport(Glibc)
    import Glibc
#endif

/// Settings of glibc's malloc that a command makes before its work, where the defaults make its
/// peak memory depend on the threads' timing.
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
    /// slower. It changes where a block's memory comes from, never what is allocated. Where
    /// malloc is not glibc's, nothing.
    /// Returns whether malloc took the setting (always false where it is not glibc's).
    @discardableResult
    static func keepLargeBlocksMapped() -> Bool {
        #if canImport(Glibc)
            // `mallopt` is declared in malloc.h, which the Glibc module does not import: it is
            // looked up by name and called as the C function it is. M_MMAP_THRESHOLD is -3
            // there; setting it also stops glibc raising it. It returns 1 when it took the value.
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "mallopt") else { return false }
            return unsafeBitCast(symbol, to: Mallopt.self)(-3, largeBlock) == 1
        #else
            return false
        #endif
    }
}
