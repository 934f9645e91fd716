import Foundation

/// One file-system operation the recorder (Tools/crash-recorder/recorder.c) logged. Files are
/// named by the recorder's ids, which follow a file across renames; directory entries by their
/// path relative to the recorded directory.
public enum RecordedOperation: Equatable, Sendable {
    case existing(file: Int, path: String)
    case create(file: Int, path: String)
    case write(file: Int, offset: Int, length: Int, dataOffset: Int)
    case truncate(file: Int, size: Int)
    case sync(file: Int)
    case syncDirectory(path: String)
    case rename(from: String, to: String)
    case link(from: String, to: String)
    case unlink(path: String)
    case makeDirectory(path: String)
    case removeDirectory(path: String)
    case close(file: Int)

    /// Operations that change a directory: made durable only by an fsync of that directory.
    var directoryEntries: [String] {
        switch self {
        case .create(_, let path), .unlink(let path), .makeDirectory(let path), .removeDirectory(let path): return [path]
        case .rename(let from, let to), .link(let from, let to): return [from, to]
        default: return []
        }
    }

    /// Operations that change a file's bytes: made durable only by an fsync of that file.
    var changedFile: Int? {
        switch self {
        case .write(let file, _, _, _), .truncate(let file, _): return file
        default: return nil
        }
    }
}

/// A run of a command under the recorder: the log, the bytes it wrote and the directory as it
/// was before the run.
public struct CrashRecording: Sendable {
    public var operations: [RecordedOperation]
    /// The bytes of every logged write, in log order (`RecordedOperation.write`'s `dataOffset`).
    public var data: [UInt8]
    /// The recorded directory before the run: relative path → bytes (folders end in "/").
    public var initial: [String: [UInt8]]

    public enum Failure: Error, CustomStringConvertible {
        case unmodelled(String)
        case malformed(line: String)
        case recorder(String)

        public var description: String {
            switch self {
            case .unmodelled(let text): return "the recorder saw an operation the replay cannot model: \(text)"
            case .malformed(let line): return "malformed recorder line: \(line)"
            case .recorder(let text): return "the recorder could not be built or run: \(text)"
            }
        }
    }

    public init(operations: [RecordedOperation], data: [UInt8], initial: [String: [UInt8]]) {
        self.operations = operations
        self.data = data
        self.initial = initial
    }

    /// Parses the recorder's log (`log`) and its written bytes (`log`.data).
    public init(log: URL, initial: [String: [UInt8]]) throws {
        let text = try String(contentsOf: log, encoding: .utf8)
        var operations: [RecordedOperation] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            func number(_ index: Int) throws -> Int {
                guard index < fields.count, let value = Int(fields[index]) else { throw Failure.malformed(line: String(line)) }
                return value
            }
            func text(_ index: Int) throws -> String {
                guard index < fields.count else { throw Failure.malformed(line: String(line)) }
                return fields[index]
            }
            switch fields[0] {
            case "E": operations.append(.existing(file: try number(1), path: try text(2)))
            case "C": operations.append(.create(file: try number(1), path: try text(2)))
            case "W":
                operations.append(.write(file: try number(1), offset: try number(2), length: try number(3), dataOffset: try number(4)))
            case "T": operations.append(.truncate(file: try number(1), size: try number(2)))
            case "S": operations.append(.sync(file: try number(1)))
            case "Z": operations.append(.syncDirectory(path: try text(1)))
            case "R": operations.append(.rename(from: try text(1), to: try text(2)))
            case "L": operations.append(.link(from: try text(1), to: try text(2)))
            case "U": operations.append(.unlink(path: try text(1)))
            case "M": operations.append(.makeDirectory(path: try text(1)))
            case "D": operations.append(.removeDirectory(path: try text(1)))
            case "K": operations.append(.close(file: try number(1)))
            case "?": throw Failure.unmodelled(fields.dropFirst().joined(separator: " "))
            default: throw Failure.malformed(line: String(line))
            }
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: log.path + ".data"))
        self.init(operations: operations, data: [UInt8](data), initial: initial)
    }

    /// The bytes and folders under `directory`, by relative path (folders end in "/").
    public static func snapshot(of directory: URL) throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        guard let enumerator = FileManager.default.enumerator(atPath: directory.path) else { return result }
        for case let path as String in enumerator {
            let url = directory.appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
                result[path + "/"] = []
            } else {
                result[path] = [UInt8](try Data(contentsOf: url))
            }
        }
        return result
    }

    /// Writes `files` (as `snapshot` returns them) into `directory`, emptied first.
    public static func materialize(_ files: [String: [UInt8]], in directory: URL) throws {
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for path in files.keys.sorted() where path.hasSuffix("/") {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(String(path.dropLast())), withIntermediateDirectories: true)
        }
        for (path, bytes) in files where !path.hasSuffix("/") {
            try Data(bytes).write(to: directory.appendingPathComponent(path))
        }
    }
}

/// Builds and runs the recorder.
public enum CrashRecorder {
    /// The shim's source, and where it is built: outside Sources/ because SwiftPM would link a
    /// C target into the test bundle, where its symbols would interpose the tests themselves.
    public static let source = Repository.root.appendingPathComponent("Tools/crash-recorder/recorder.c")
    public static let library = Repository.root.appendingPathComponent(".build/crash-recorder.so")

    /// Builds the shim when it is missing or older than its source, through a temporary name so
    /// that test processes running at once never load a half-written library.
    public static func build() throws -> URL {
        let fileManager = FileManager.default
        let sourceDate = (try? fileManager.attributesOfItem(atPath: source.path)[.modificationDate] as? Date) ?? Date()
        if let built = try? fileManager.attributesOfItem(atPath: library.path)[.modificationDate] as? Date, built >= sourceDate {
            return library
        }
        let temporary = library.path + ".\(getpid())"
        // cc where the system has one, else the clang that comes with the Swift toolchain.
        var result = try Questbak.runTool(["cc", "-shared", "-fPIC", "-O2", "-o", temporary, source.path, "-ldl"])
        if result.status == 127 {
            result = try Questbak.runTool(["clang", "-shared", "-fPIC", "-O2", "-o", temporary, source.path, "-ldl"])
        }
        guard result.status == 0 else { throw CrashRecording.Failure.recorder(result.standardError) }
        guard rename(temporary, library.path) == 0 else { throw CrashRecording.Failure.recorder("rename: \(errno)") }
        return library
    }

    /// Runs questbak with `arguments` under the recorder watching `directory`; returns the
    /// recording and the command's result.
    public static func record(
        _ arguments: [String], directory: URL, log: URL, environment: [String: String] = [:]
    ) throws -> (CrashRecording, CommandResult) {
        let library = try build()
        let root = directory.resolvingSymlinksInPath()
        let initial = try CrashRecording.snapshot(of: root)
        let result = try Questbak.run(
            arguments,
            environment: environment.merging(
                ["LD_PRELOAD": library.path, "CRASH_RECORDER_DIR": root.path, "CRASH_RECORDER_LOG": log.path]) { _, recorder in recorder })
        return (try CrashRecording(log: log, initial: initial), result)
    }
}
