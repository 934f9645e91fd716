import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak.Fixtures {
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a store into the fixtures folder, named by its model.",
            discussion: """
                The store is copied through a consistent snapshot, as export reads it: the store, its -wal and its -shm are \
                left byte for byte as they were, the WAL is folded into the copy, and the external-storage files come along. \
                The fixture is named <version identifier>-<model hash> unless --name is given. A store of a physical model \
                that the set already has is refused (exit 73), naming the fixture that has it: one fixture per model is what \
                the gate needs. --keep adds it anyway.
                """
        )

        @Argument(help: "The store file to copy (a live app's store may be given: it is only read).", completion: .file())
        var store: String

        @OptionGroup var folder: FolderOption

        @Option(help: "The fixture's folder name (default: <version identifier>-<model hash>).")
        var name: String?

        @Option(name: .customLong("app-version"), help: "The app version that wrote the store, recorded in the manifest.")
        var appVersion: String?

        @Flag(help: "Add the store even when the set has a fixture of the same physical model.")
        var keep = false

        @Flag(help: "Print what was added as JSON.")
        var json = false

        func run() throws {
            try reportingFailures(json: json, hint: Self.hint) {
                let seconds = try ISOTimestamp.creationTime(flag: nil)
                let added = try FixtureSet(folder: URL(fileURLWithPath: folder.folder)).add(
                    store: URL(fileURLWithPath: store), name: name, appVersion: appVersion, keepSameModel: keep,
                    addedAt: Date(timeIntervalSince1970: TimeInterval(seconds)))
                if json {
                    print(try JSONOutput.render(added))
                    return
                }
                let version =
                    added.entry.versionIdentifiers.isEmpty
                    ? "no version identifier" : "version \(added.entry.versionIdentifiers.joined(separator: ", "))"
                print("added fixture \(added.entry.name): \(added.store) (\(version), model \(added.entry.modelHash))")
                if added.externalFiles > 0 { print("  with \(added.externalFiles) external-storage file(s)") }
                if let same = added.sameModelAs { print("  kept beside \(same), which has the same physical model (--keep)") }
                print("  recorded in \(FixtureSet(folder: URL(fileURLWithPath: folder.folder)).manifestURL.path)")
            }
        }

        static func hint(_ error: Error) -> String? {
            switch error {
            case FixtureSet.Failure.sameModel: return "use --keep to add it anyway"
            case FixtureSet.Failure.nameTaken: return "choose another --name"
            default: return nil
            }
        }
    }
}
