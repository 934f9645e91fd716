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
        abstract: "Back up, restore, repair and migration-check the SwiftData store of the TimeQuest app.",
        discussion: """
            A SwiftData store is a Core Data SQLite file (default.store with -wal and -shm beside it). \
            questbak reads it without modifying any source file and writes archives and stores atomically.

            EXIT STATUS: \
            0 success; \
            1 unexpected failure; \
            2 the archive needs repairs (import without --validate, or import --validate without --into); \
            3 verify-migration found a failing check; \
            64 usage error; \
            65 invalid input (damaged archive or store, checksum mismatch, tables that do not match their schema, not a Core Data store); \
            66 input missing or unreadable; \
            69 format or schema version newer than this questbak supports; \
            73 output exists or cannot be created; \
            74 I/O error (disk full, permissions); \
            75 the store kept changing or was locked while being read (close the app and retry).
            """,
        version: QuestBak.version,
        subcommands: [Inspect.self, Export.self, Import.self, Migrate.self, VerifyMigration.self, CheckMigration.self, SchemaCommand.self]
    )
}
