import ArgumentParser
import QuestBakKit

/// Where a command gets its target schema: a built-in version, or a schema file (a proposed
/// next version) added to the built-in ones. The command line applies TimeQuest's profile to
/// every store and archive whose model is one of its versions; the library applies none unasked.
struct SchemaOptions: ParsableArguments {
    @Option(
        name: .customLong("schema"),
        help: "A schema file (JSON, see `questbak schema`) to use as the target, e.g. a proposed next version.", completion: .file())
    var schemaFile: String?

    /// TimeQuest's profile, with the schema file as its newest version when one is given.
    func profile() throws -> AppProfile {
        guard let schemaFile else { return .timeQuest }
        return AppProfile.timeQuest.addingVersion(try Schema.load(from: try InputPath.schemaFile(schemaFile)))
    }

    func schemas() throws -> (target: ModelVersion, candidates: [ModelVersion]) {
        let profile = try profile()
        return (profile.versions[profile.versions.count - 1], profile.versions)
    }
}
