import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct Redact: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a copy of a store with every value that could identify a person replaced, safe to share.",
            discussion: """
                The copy has the same model, keys, relationships and row counts, so the app opens it and verify-migration \
                treats it as it treats the original; it can be attached to a bug report or committed as a fixture. Text \
                becomes text of the same length and shape (letters, digits and punctuation where they were), UUIDs other \
                UUIDs, bytes and external-storage files other bytes, strings inside archived values (transformables) other \
                strings; dates all move by one offset, so their order and intervals stay; numbers stay unless \
                --scramble-numbers. Every replacement is derived from a key with HMAC-SHA-256: equal values stay equal and \
                different values stay different, so uniqueness constraints and duplicates behave as before, and the same key \
                gives the same copy. Without --key-file a random key is used and forgotten. Persistent history (ACHANGE, \
                ATRANSACTION, ATRANSACTIONSTRING) and CloudKit mirroring tables (ANSCK) are emptied; Core Data's Z_ tables, \
                the model cache and the metadata are copied as they are; other tools' tables are redacted by storage class. \
                A store with no model cache is redacted table by table by storage class. The copy is a new file written \
                beside OUT and linked into place when complete: no original value is in it, not even in free pages, and the \
                source and its -wal and -shm are only read. Given an archive, redact restores it as archived into a private \
                scratch folder (removed at exit), redacts that store and exports it, proved as export --verify does, to OUT; \
                the archive's creation time is SOURCE_DATE_EPOCH, else now.

                Example: `questbak redact default.store -o shared/default.store --keep TaskEstimation.ratingRawValue --report redaction.json`.
                """
        )

        @Argument(
            help:
                "The store file (its -wal and external-storage files are read from beside it), or an archive to redact into a new archive.",
            completion: .file())
        var store: String

        @Option(
            name: .shortAndLong, help: "The redacted store (or, for an archive, archive) to create; never overwritten.", completion: .file()
        )
        var output: String

        @Option(
            name: .customLong("keep"), parsing: .singleValue,
            help: ArgumentHelp(
                "A property to copy as it is, as ENTITY.PROPERTY (repeatable).",
                discussion: "For values the app cannot do without, such as an enum's raw values.", valueName: "ENTITY.PROPERTY"))
        var keep: [String] = []

        @Option(help: "A file whose bytes are the key (the same key gives the same copy).", completion: .file())
        var keyFile: String?

        @Flag(help: "Replace integers by others of as many digits, and scale other numbers by one factor.")
        var scrambleNumbers = false

        @Option(help: "Write what was done to each table and property as JSON to this file.", completion: .file())
        var report: String?

        @Flag(name: .shortAndLong, help: "Print nothing but errors.")
        var quiet = false

        func run() throws {
            try reportingFailures(hint: Self.hint) {
                var options: Redactor.Options
                if let keyFile {
                    let bytes: Data
                    do {
                        bytes = try Data(contentsOf: URL(fileURLWithPath: keyFile))
                    } catch {
                        throw CommandLineInputError(status: .noInput, message: "cannot read the key file \(keyFile)")
                    }
                    options = Redactor.Options(key: try RedactionKey(bytes: bytes))
                    options.keyDescription = "the key file's bytes"
                } else {
                    options = Redactor.Options(key: RedactionKey.random())
                }
                options.keep = keep
                options.scrambleNumbers = scrambleNumbers
                options.profiles = [.timeQuest]
                // The report's file is made first, so that a report that cannot be written stops
                // the run before any store is; it is renamed into place only after the store.
                let reportFile = try report.map { try AtomicOutputFile(destination: URL(fileURLWithPath: $0), overwrite: false) }
                let result: RedactionReport
                if FileKind.of(store) == .archive {
                    result = try Redactor.redact(
                        archiveAt: URL(fileURLWithPath: store), to: URL(fileURLWithPath: output), options: options,
                        createdAt: try ISOTimestamp.creationTime(flag: nil))
                } else {
                    result = try Redactor.redact(storeAt: URL(fileURLWithPath: store), to: URL(fileURLWithPath: output), options: options)
                }
                if let report, let file = reportFile {
                    let text = Data((try JSONOutput.render(result) + "\n").utf8)
                    let written = text.withUnsafeBytes { write(file.fileDescriptor, $0.baseAddress, $0.count) }
                    guard written == text.count else { throw OutputError.io(path: report, reason: String(cString: strerror(errno))) }
                    try file.commit()
                }
                if !quiet {
                    print("redacted \(store) (described by \(result.describedBy))")
                    print("  to \(output)" + (result.externalFiles > 0 ? " with \(result.externalFiles) external-storage files" : ""))
                    for table in result.tables { print("  \(table.name): \(table.rows) rows, \(table.action)") }
                }
            }
        }

        static func hint(_ error: Error) -> String? {
            switch error {
            case RedactionError.unknownProperty: return "--keep takes ENTITY.PROPERTY"
            case OutputError.exists: return "redact never overwrites; choose another -o or remove it"
            default: return nil
            }
        }
    }
}
