import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak.Fixtures {
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
