import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct Fixtures: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Keep a folder of migration fixtures: add real stores safely, list what the set holds.",
            discussion: """
                A fixtures folder holds one folder per fixture (<name>/default.store, with its external-storage files) and a \
                manifest, questbak-fixtures.json, recording each fixture's provenance: the app version, when it was added and \
                the model it carries. verify-migration reads the folder with or without the manifest.
                """,
            subcommands: [Add.self, List.self, Chain.self]
        )

        struct FolderOption: ParsableArguments {
            @Option(name: .customLong("fixtures"), help: "The fixtures folder.", completion: .directory)
            var folder = "MigrationFixtures"
        }

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

        struct Chain: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Name the stores of the app's intermediate models once, for every gate run.",
                discussion: """
                    Each STORE is a store the app made with one of its intermediate models (run that build once and copy its \
                    store), kept inside the fixtures folder two folders deep (models/<version>/default.store), oldest first. \
                    verify-migration --to NEW_BUILD_STORE then migrates every fixture through each of them, as a staged \
                    migration does, without --through on every run (--through, when given, is used instead). With no STORE, \
                    prints the chain; with --clear, removes it.
                    """
            )

            @Argument(help: "The intermediate models' stores, oldest first.", completion: .file())
            var stores: [String] = []

            @OptionGroup var folder: FolderOption

            @Flag(help: "Remove the chain.")
            var clear = false

            func validate() throws {
                if clear && !stores.isEmpty { throw ValidationError("--clear takes no STORE") }
            }

            func run() throws {
                try reportingFailures {
                    let set = FixtureSet(folder: URL(fileURLWithPath: folder.folder))
                    if clear || !stores.isEmpty {
                        let chain = try set.setChain(stores.map { URL(fileURLWithPath: $0) })
                        print(
                            chain.isEmpty ? "the chain is removed" : "chain: " + chain.joined(separator: " → ") + " → the new build's model"
                        )
                    } else {
                        let chain = try set.manifest().chain ?? []
                        print(
                            chain.isEmpty
                                ? "no chain: each fixture migrates straight to the new build's model" : chain.joined(separator: "\n"))
                    }
                }
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show each fixture's version, model hash, record counts and recorded goldens.")

            @OptionGroup var folder: FolderOption

            @Flag(help: "Print the fixtures as JSON.")
            var json = false

            func run() throws {
                try reportingFailures(json: json) {
                    let url = URL(fileURLWithPath: folder.folder)
                    guard FileKind.of(url.path) == .folder else {
                        throw CommandLineInputError(status: .noInput, message: "\(url.path): no such fixtures folder")
                    }
                    let listings = try FixtureSet(folder: url).list()
                    if json {
                        print(try JSONOutput.render(listings))
                        return
                    }
                    guard !listings.isEmpty else {
                        throw CommandLineInputError(status: .noInput, message: "\(url.path): no fixture stores (<name>/default.store)")
                    }
                    for fixture in listings {
                        let version =
                            fixture.versionIdentifiers.isEmpty
                            ? "no version identifier" : "version " + fixture.versionIdentifiers.joined(separator: ", ")
                        let records = fixture.entities.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                        let goldens =
                            fixture.goldens.isEmpty ? "no goldens recorded" : "goldens for " + fixture.goldens.joined(separator: ", ")
                        let provenance =
                            fixture.entry.map { entry in
                                "added \(entry.addedAt)" + (entry.appVersion.map { " from app version \($0)" } ?? "")
                            } ?? "not in the manifest"
                        print("\(fixture.name): \(version), model \(fixture.modelHash); \(goldens); \(provenance)\n  \(records)")
                    }
                }
            }
        }
    }
}
