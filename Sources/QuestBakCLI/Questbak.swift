import ArgumentParser
import Foundation
import QuestBakKit

/// The entry point the `questbak` executable calls: installs the process-wide hooks the library
/// leaves to its host (interrupt cleanup, fault injection), then runs the command line.
public enum CommandLineTool {
    public static func main() {
        // First: SQLite takes it only before its first connection. A debug build stops here if
        // anything before this line opens one (every command test runs the debug build).
        let statisticsOff = SQLiteSettings.turnOffMemoryStatistics()
        assert(statisticsOff, "SQLite was initialized before questbak's settings")
        ProcessHooks.install()
        let arguments = Array(CommandLine.arguments.dropFirst())
        func suggest() {
            if let message = Suggestions.message(for: arguments) {
                FileHandle.standardError.write(Data("questbak: error: \(message)\n".utf8))
                exit(ExitStatus.usage.rawValue)
            }
        }
        // `help COMMAND` parses whatever COMMAND is (argument-parser shows the overview for one
        // it lacks). Any other mistyped command or option fails the parse (no command takes an
        // unknown word or `--name`), so the suggestions, which render every option's help (a few
        // ms, a seventh of a short command's time), are looked for only then.
        if arguments.first == "help" { suggest() }
        var command: ParsableCommand
        do {
            command = try Questbak.parseAsRoot(arguments)
        } catch {
            suggest()
            reportParserError(error)
        }
        do {
            try command.run()
        } catch {
            reportParserError(error)
        }
    }

    /// Every error in one style, `questbak: error: …`: the argument parser's own (a missing
    /// argument, a failed validation) too, which it would print as `Error: …`. Help, the version
    /// and a command's own exit status (its message already printed) go through unchanged.
    static func reportParserError(_ error: Error) -> Never {
        let status = Questbak.exitCode(for: error)
        guard status != .success, !(error is ExitCode) else { Questbak.exit(withError: error) }
        var lines = Questbak.fullMessage(for: error).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if let first = lines.first, first.hasPrefix("Error: ") { lines.removeFirst() }
        let text = ["questbak: error: " + Suggestions.sentence(Questbak.message(for: error))] + lines.filter { !$0.isEmpty }
        FileHandle.standardError.write(Data((text.joined(separator: "\n") + "\n").utf8))
        Foundation.exit(status.rawValue)
    }
}

struct Questbak: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "questbak",
        abstract: "Back up and restore any SwiftData or Core Data store; repair and migration-check the TimeQuest app's.",
        discussion: """
            A SwiftData store is a Core Data SQLite file (default.store with -wal and -shm beside it). \
            questbak reads it without modifying any source file and writes archives and stores atomically.

            EXIT STATUS lists what each exit status means.
            """,
        version: QuestBak.version,
        subcommands: [
            Inspect.self, Export.self, Import.self, Migrate.self, VerifyMigration.self, CheckMigration.self, SchemaCommand.self, Lint.self,
            Verify.self, Diff.self, Locate.self, Fixtures.self, Keygen.self, Redact.self,
            ExitStatuses.self,
        ]
    )
}
