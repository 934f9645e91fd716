import Foundation

/// What a host process may plug into the library. The library itself installs no signal handler,
/// reads no environment variable and never ends its process: the `questbak` executable installs
/// hooks that remove temporary files when it is interrupted and, for the crash-safety harness,
/// kill it at a numbered point; an app that embeds QuestBakKit may install its own, or none.
package enum Hooks {
    /// A temporary file's or folder's coming or going.
    public enum TemporaryFileEvent: Sendable {
        /// A temporary file or folder now exists and should go if the process is interrupted.
        case created(String)
        /// It is gone (removed, or renamed into place).
        case removed(String)
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var temporaryFileHandler: (@Sendable (TemporaryFileEvent) -> Void)?
    nonisolated(unsafe) private static var faultPointHandler: (@Sendable (String) -> Void)?

    /// Told of every temporary file and folder the library creates and removes.
    public static var temporaryFile: (@Sendable (TemporaryFileEvent) -> Void)? {
        get { lock.withLock { temporaryFileHandler } }
        set { lock.withLock { temporaryFileHandler = newValue } }
    }

    /// Called at each named point of the write paths (`FaultPoint`), in order.
    public static var faultPoint: (@Sendable (String) -> Void)? {
        get { lock.withLock { faultPointHandler } }
        set { lock.withLock { faultPointHandler = newValue } }
    }
}

/// The temporary files and folders of the write paths, announced to `Hooks.temporaryFile`.
package enum TemporaryFiles {
    package static func created(_ path: String) { Hooks.temporaryFile?(.created(path)) }
    package static func removed(_ path: String) { Hooks.temporaryFile?(.removed(path)) }
}

/// Named points in the write paths where the crash-safety harness kills the process
/// (Tests/questbakTests/CrashSafetyTests.swift): each reached point is passed to
/// `Hooks.faultPoint`. Without a hook a point costs one uncontended lock, to read the hook.
package enum FaultPoint {
    package static func reached(_ label: @autoclosure () -> String) {
        guard let hook = Hooks.faultPoint else { return }
        hook(label())
    }
}
