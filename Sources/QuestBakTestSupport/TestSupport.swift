import Foundation
import QuestBakFixtures
import XCTest

/// The repository's folders, found from this file's location so tests run from any directory.
public enum Repository {
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    public static let fixtures = root.appendingPathComponent("Fixtures")
}

/// A fresh directory per test, removed afterwards (GRDB's habit): tests never share files.
public final class TemporaryTestDirectory {
    public let url: URL

    public init(_ name: String = "questbak-test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        // Read-only test folders must be made writable again before they can be removed.
        if let enumerator = FileManager.default.enumerator(atPath: url.path) {
            for case let path as String in enumerator {
                try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.appendingPathComponent(path).path)
            }
        }
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        try? FileManager.default.removeItem(at: url)
    }

    public func path(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Makes `folder` and its files read-only, and this directory traversable by the
    /// unprivileged user that `Questbak.unprivileged` runs commands as.
    public func makeReadOnly(_ folder: URL) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: folder.appendingPathComponent(name).path)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
    }

    /// Copies the fixture folder `name` (store, and its -wal/-shm when it has them) here and
    /// returns the copied store's URL. Opening a committed fixture in place could change it.
    public func copyFixture(_ name: String) throws -> URL {
        let destination = url.appendingPathComponent(name)
        try FileManager.default.copyItem(at: Repository.fixtures.appendingPathComponent(name), to: destination)
        return destination.appendingPathComponent("default.store")
    }

    /// The same, into a folder of the given name (for two copies of one fixture side by side).
    public func copyFixture(_ name: String, as folder: String) throws -> URL {
        let destination = url.appendingPathComponent(folder)
        try FileManager.default.copyItem(at: Repository.fixtures.appendingPathComponent(name), to: destination)
        return destination.appendingPathComponent("default.store")
    }
}

/// Every file under a directory with its bytes and modification time, to prove nothing changed.
public struct DirectoryState: Equatable, CustomStringConvertible {
    public var files: [String: String]

    public init(of directory: URL) throws {
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() {
            let url = directory.appendingPathComponent(name)
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            let data = (try? Data(contentsOf: url)) ?? Data()
            files[name] = "\(data.count) bytes, hash \(data.hashValue), modified \(modified)"
        }
        self.files = files
    }

    public var description: String { files.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n") }
}

/// Runs the built `questbak` executable, like argument-parser's `AssertExecuteCommand`.
public struct CommandResult {
    /// The exit status, or the signal's number when `killedBySignal`.
    public var status: Int32
    public var killedBySignal = false
    public var standardOutput: String
    public var standardError: String
    public var outputData: Data
}

public enum Questbak {
    /// The `questbak` binary built beside the test bundle.
    public static var executable: URL {
        let buildDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [buildDirectory, buildDirectory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("questbak")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return Repository.root.appendingPathComponent(".build/debug/questbak")
    }

    /// Runs questbak with `arguments`; `prefix` wraps it (e.g. `setpriv …` to drop privileges).
    @discardableResult
    public static func run(
        _ arguments: [String], prefix: [String] = [], environment: [String: String]? = nil, input: Data? = nil
    ) throws -> CommandResult {
        try execute(["/usr/bin/env"] + prefix + [executable.path] + arguments, environment: environment, input: input)
    }

    /// Runs another program found on PATH (tar, python3, sqlite3) and collects its output.
    @discardableResult
    public static func runTool(_ command: [String], input: Data? = nil) throws -> CommandResult {
        try execute(["/usr/bin/env"] + command, environment: nil, input: input)
    }

    private static func execute(_ command: [String], environment: [String: String]?, input: Data?) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        let inputPipe = Pipe()
        process.standardInput = inputPipe
        try process.run()
        if let input { inputPipe.fileHandleForWriting.write(input) }
        try inputPipe.fileHandleForWriting.close()
        // Read both pipes to the end before waiting, so a large output cannot deadlock the child.
        let errorReader = PipeReader(error.fileHandleForReading)
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errorReader.wait()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus, killedBySignal: process.terminationReason == .uncaughtSignal,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self), outputData: outputData)
    }
}

extension Questbak {
    /// A prefix that runs a command as `nobody` when the tests run as root: root ignores
    /// permission bits, so a read-only directory is only read-only for someone else.
    public static var unprivileged: [String] {
        getuid() == 0 ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
    }

    /// Runs any program to completion, output discarded; returns its exit status.
    public static func runProcess(_ path: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Drains a pipe on a background thread.
final class PipeReader: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        DispatchQueue.global().async {
            self.data = handle.readDataToEndOfFile()
            self.done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}

/// Runs `body` while another process (python's sqlite3, as an app would) has `store` open in an
/// idle connection, which keeps its `-wal` and `-shm`: the store is in use.
public func whileHeldOpen<T>(_ store: URL, _ body: () throws -> T) throws -> T {
    let holder = Process()
    holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    holder.arguments = [
        "python3", "-c",
        "import sqlite3, time\ndb = sqlite3.connect('\(store.path)')\ndb.execute('SELECT count(*) FROM sqlite_master').fetchall()\nprint('open', flush=True)\ntime.sleep(6)",
    ]
    let ready = Pipe()
    holder.standardOutput = ready
    try holder.run()
    _ = ready.fileHandleForReading.availableData  // "open"
    defer {
        holder.terminate()
        holder.waitUntilExit()
    }
    return try body()
}
