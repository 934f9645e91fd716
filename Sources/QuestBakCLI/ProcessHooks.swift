import Dispatch
import Foundation
import QuestBakKit

/// The process-wide behaviour the library leaves to its host, installed once by `questbak`:
/// temporary files removed when the process is interrupted, a file-size limit reported as an
/// error, and the crash-safety harness's fault injection.
enum ProcessHooks {
    static func install() {
        // A file-size limit (`ulimit -f`) must end in a clean error like a full disk, not in the
        // SIGXFSZ that kills the process by default: with the signal ignored, the write fails with EFBIG.
        signal(SIGXFSZ, SIG_IGN)
        InterruptCleanup.install()
        Hooks.temporaryFile = { event in
            switch event {
            case .created(let path): InterruptCleanup.register(path)
            case .removed(let path): InterruptCleanup.unregister(path)
            }
        }
        if let hook = FaultInjection.hookFromEnvironment() { Hooks.faultPoint = hook }
        // What runs killed before they could clean up left behind (SIGKILL, power loss).
        TemporaryDirectory.removeStale(prefixes: InterruptCleanup.folderPrefixes)
    }
}

/// Temporary files and folders to remove when SIGINT, SIGTERM or SIGHUP arrives: a Ctrl-C must not
/// leave a 100 MB staging folder behind. The signals are received by dispatch sources, so the
/// removal runs as ordinary code on a queue (folders included), then the signal is raised again
/// with its default action so the exit status says what happened.
enum InterruptCleanup {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var paths: Set<String> = []
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []
    nonisolated(unsafe) private static var interrupted = false

    /// Whether a signal is being handled: the work's own failures (its files were just removed)
    /// are then not reported, the signal ends the process.
    static var isInterrupted: Bool { lock.withLock { interrupted } }

    /// Waits for the signal being handled to end the process.
    static func awaitTermination() -> Never {
        while true { sleep(1) }
    }

    static func install() {
        let queue = DispatchQueue(label: "questbak.interrupt")
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler {
                lock.withLock { interrupted = true }
                removeAll()
                signal(signalNumber, SIG_DFL)
                // To the process, not this thread: dispatch's threads block signals, so raise()
                // here would leave it pending while the main thread carried on.
                kill(getpid(), signalNumber)
            }
            source.resume()
            lock.withLock { sources.append(source) }
        }
    }

    /// The prefixes of the library's temporary folders (`TemporaryDirectory.create`).
    /// A longer prefix comes before one it starts with (`removeStale` takes the first that matches).
    static let folderPrefixes = [
        "questbak-snapshot", "questbak-export", "questbak-work", "questbak-redact-archive", "questbak-redact", "questbak-rescue",
    ]

    /// A path made while a signal is being handled is removed at once: the handler's list was
    /// taken before it existed (a snapshot folder made 0.2 s into an interrupted export outlived
    /// the process under load).
    static func register(_ path: String) {
        let late = lock.withLock {
            paths.insert(path)
            return interrupted
        }
        if late { try? FileManager.default.removeItem(atPath: path) }
    }
    static func unregister(_ path: String) { _ = lock.withLock { paths.remove(path) } }

    /// Longest paths first, so files inside a registered folder go before it; then this process's
    /// own temporary folders by name (they carry its pid), for one made but not yet registered.
    static func removeAll() {
        let pending = lock.withLock { paths.sorted { $0.count > $1.count } }
        for path in pending { try? FileManager.default.removeItem(atPath: path) }
        TemporaryDirectory.removeOwn(prefixes: folderPrefixes)
    }
}

/// The crash-safety harness (Tests/questbakTests/CrashSafetyTests.swift): with
/// `QUESTBAK_KILL_AT=N`, reaching the N-th fault point raises SIGKILL, the signal nothing can
/// catch; the harness walks N from 1 until a run completes and checks the target after every
/// kill. `QUESTBAK_KILL_TRACE=1` prints each point reached to standard error.
enum FaultInjection {
    static func hookFromEnvironment() -> (@Sendable (String) -> Void)? {
        let environment = ProcessInfo.processInfo.environment
        let killAt = environment["QUESTBAK_KILL_AT"].flatMap(Int.init)
        let trace = environment["QUESTBAK_KILL_TRACE"] == "1"
        guard killAt != nil || trace else { return nil }
        let counter = Counter()
        return { label in
            let number = counter.next()
            if trace { FileHandle.standardError.write(Data("fault point \(number): \(label)\n".utf8)) }
            if number == killAt { kill(getpid(), SIGKILL) }
        }
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func next() -> Int {
            lock.withLock {
                value += 1
                return value
            }
        }
    }
}
