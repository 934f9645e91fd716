import ArgumentParser
import Foundation
import QuestBakKit

/// The entry point the `questbak` executable calls: installs the process-wide hooks the library
/// leaves to its host (interrupt cleanup, fault injection), then runs the command line.
public enum CommandLineTool {
    public static func main() {
        ProcessHooks.install()
        if let message = Suggestions.message(for: Array(CommandLine.arguments.dropFirst())) {
            FileHandle.standardError.write(Data("questbak: error: \(message)\n".utf8))
            exit(ExitStatus.usage.rawValue)
        }
        Questbak.main()
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
            Verify.self, Diff.self,
            Keygen.self,
            ExitStatuses.self,
        ]
    )
}
