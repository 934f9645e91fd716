import Foundation

/// Whether the process that left a temporary file or folder behind (its id is in the name) is
/// gone, so the leftover can be removed: the one place questbak asks about another process.
package enum ProcessLiveness {
    /// True only when `pid` names no running process (kill(pid, 0) fails with ESRCH); false when
    /// it runs, is this process, or cannot be told.
    package static func hasExited(_ pid: Int32) -> Bool {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            // In an app's sandbox, signalling another process is denied, and a pid left by an
            // earlier launch may now name anything (an extension sharing the container, say):
            // nothing can be told, so nothing is removed as stale. The app's container is its own
            // to clean.
            return false
        #else
            guard pid > 0, pid != getpid() else { return false }
            return kill(pid, 0) == -1 && errno == ESRCH
        #endif
    }
}
