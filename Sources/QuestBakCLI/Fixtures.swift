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
    }
}
