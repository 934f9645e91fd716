import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak.Fixtures {
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
}
