import Foundation

/// Named points in the write paths where the reliability harness kills the process.
///
/// With `QUESTBAK_KILL_AT=N` in the environment, reaching the N-th point raises SIGKILL, the
/// signal nothing can catch: the harness (Tests/questbakTests/CrashSafetyTests.swift,
/// Scripts/kill-points) walks N from 1 until a run completes and checks the target after every
/// kill. `QUESTBAK_KILL_TRACE=1` prints each point reached to standard error. Without these
/// variables a point costs one integer comparison.
public enum FaultInjection {
    private static let killAt: Int? = ProcessInfo.processInfo.environment["QUESTBAK_KILL_AT"].flatMap(Int.init)
    private static let trace = ProcessInfo.processInfo.environment["QUESTBAK_KILL_TRACE"] == "1"
    private static var reached = 0
    private static let lock = NSLock()

    public static func point(_ label: @autoclosure () -> String) {
        guard killAt != nil || trace else { return }
        lock.lock()
        reached += 1
        let number = reached
        lock.unlock()
        if trace { FileHandle.standardError.write(Data("fault point \(number): \(label())\n".utf8)) }
        if number == killAt { kill(getpid(), SIGKILL) }
    }
}
