import ArgumentParser
import Foundation
import QuestBakKit

/// The exit statuses of questbak, documented in questbak(1) under EXIT STATUS. Chosen here, in
/// the CLI layer only; the library throws typed errors and knows nothing of processes.
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    /// An unexpected failure with no more specific status.
    case failure = 1
    /// The archive needs repairs: `import --validate` without a target found some, or `import`
    /// without `--validate` refused to make them.
    case repairsNeeded = 2
    /// `verify-migration` found at least one failing check.
    case verificationFailed = 3
    /// Command-line usage error (argument-parser's EX_USAGE).
    case usage = 64
    /// The input is damaged or not what it claims: corrupt archive, checksum mismatch, a store
    /// whose tables do not match its schema, a file that is not a Core Data store.
    case invalidInput = 65
    /// The input file does not exist or cannot be read.
    case noInput = 66
    /// The input uses a format or schema version newer than this questbak supports.
    case unsupportedVersion = 69
    /// The output exists (and --force or --replace was not given) or cannot be created.
    case cannotCreateOutput = 73
    /// Reading or writing failed at the operating-system level (disk full, permissions).
    case ioError = 74
    /// The source store kept changing while it was read; retry when the app is closed.
    case busy = 75

    /// The status a failure ends in: the command line's own refusals first, then the library's
    /// error category (`QuestBakError.Category`), looked up in `init(_:)`.
    static func of(_ error: Error) -> ExitStatus {
        switch error {
        case let error as CommandLineInputError:
            return error.status
        case is ValidationError:
            return .usage
        default:
            // Repairs needed is an outcome with a status of its own, not a kind of failure.
            if let error = error as? ImportError, case .repairsNeeded = error { return .repairsNeeded }
            return ExitStatus(QuestBakError(error).category)
        }
    }

    /// The status of each error category. A cancellation has no status of its own: the command
    /// line is stopped by a signal (`ProcessHooks`), not by cancelling a task.
    init(_ category: QuestBakError.Category) {
        switch category {
        case .busy: self = .busy
        case .invalidInput: self = .invalidInput
        case .unsupportedVersion: self = .unsupportedVersion
        case .missingInput: self = .noInput
        case .outputExists: self = .cannotCreateOutput
        case .io: self = .ioError
        case .usage: self = .usage
        case .cancelled, .unexpected: self = .failure
        }
    }
}

/// Runs a command body, turning a library error into its message on stderr and its exit status.
/// The library's message states the facts; `hint` adds what to do about it in this command's
/// words (its flags), which only the command line knows.
func reportingFailures(json: Bool = false, hint: (Error) -> String? = { _ in nil }, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch let error as CleanExit {
        throw error
    } catch {
        if InterruptCleanup.isInterrupted { InterruptCleanup.awaitTermination() }
        var message = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        if let hint = hint(error) { message += " (\(hint))" }
        let status = ExitStatus.of(error)
        FileHandle.standardError.write(Data("questbak: error: \(message)\n".utf8))
        // Under --json, standard output carries the failure as JSON too, for whoever parses it.
        if json, let document = try? JSONOutput.render(ErrorDocument(error: message, exitStatus: status.rawValue)) { print(document) }
        throw ExitCode(status.rawValue)
    }
}

/// What `--json` prints when a command fails.
struct ErrorDocument: Encodable {
    var error: String
    var exitStatus: Int32
}

enum JSONOutput {
    static func render<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// Words for the shell, in commands questbak prints for the user to run.
enum Shell {
    /// `text` as one shell word: single-quoted unless it is plainly safe.
    static func quoted(_ text: String) -> String {
        let safe = text.utf8.allSatisfy { byte in
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || "-_./=:,+@%".utf8.contains(byte)
        }
        return safe && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// How to put back a store that a replace set aside: every file of the backup, and the commands.
enum Undo {
    static func text(backup: URL, files: [URL], target: URL) -> String {
        let (backup, files, target) = (backup.path, files.map(\.path), target.path)
        var commands = ["rm -f " + CoreDataSQL.storeFileSuffixes.map { Shell.quoted(target + $0) }.joined(separator: " ")]
        for file in files {
            commands.append("mv \(Shell.quoted(file)) \(Shell.quoted(target + file.dropFirst(backup.count)))")
        }
        return "previous store kept as " + files.joined(separator: ", ") + "\nto undo: " + commands.joined(separator: " && ")
    }
}

/// A command-line input the command checked itself before starting (a folder or file argument),
/// with the status it ends in.
struct CommandLineInputError: Error, LocalizedError {
    var status: ExitStatus
    var message: String
    var errorDescription: String? { message }
}
