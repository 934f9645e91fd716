import CoreDataStore
import QuestBakArchive

/// What questbak knows about one app beyond what its models say: how its records are recognised
/// when their cloudIDs do not match (natural keys), which entities hold one record (singletons,
/// with the rules that merge their copies), the element types of transformable attributes a
/// model names only by their transformer, and the app's known model versions.
///
/// A store or archive is handled by a profile when its model is one of the profile's versions
/// (its entity hashes match one, see `StoreMetadata.versionMatchingHashes`). The library applies
/// no profile of its own accord: a caller passes the ones it wants (`Exporter.Options.profiles`,
/// `Importer.Options.profiles`); the command line passes `AppProfile.timeQuest`. Any other store
/// goes through the model it carries.
package struct AppProfile: Sendable, Equatable {
    /// Names the app in messages.
    package var name: String
    /// The known versions with the profile applied, oldest first: the models the engine reads,
    /// writes and repairs a store of this app by.
    package private(set) var versions: [ModelVersion]
    /// The same versions as declared (a schema file's form, with the profile's identities and
    /// kinds), for what starts from a declaration: `questbak schema` prints one, and fixture
    /// tooling writes stores of one. Each compiles to the version at its index; a profile made of
    /// compiled versions has none.
    package private(set) var declarations: [Schema]
    /// Per entity: its natural key, singleton cloudID and merge rules (given to each version).
    package let identities: [String: Identity]
    /// Per entity, per attribute: the kind a transformable really holds (`[Int]`, `[String]`),
    /// which a model cannot say (it names the transformer, not the element type).
    package let attributeKinds: [String: [String: AttributeKind]]

    /// A profile of `models` (oldest first) as the models themselves describe them; its versions
    /// are those models with `identities` and `attributeKinds` applied, compiled.
    package init(
        name: String, models: [Schema], identities: [String: Identity] = [:], attributeKinds: [String: [String: AttributeKind]] = [:]
    ) {
        self.name = name
        self.identities = identities
        self.attributeKinds = attributeKinds
        self.declarations = []
        self.versions = []
        self.declarations = models.map(applied(to:))
        self.versions = declarations.map(ModelVersion.init(schema:))
    }

    /// A profile of versions already compiled, each with its own identities and kinds (a gate's
    /// candidates); it has no declarations, and nothing of its own to apply to one.
    package init(name: String, versions: [ModelVersion]) {
        self.name = name
        self.versions = versions
        declarations = []
        identities = [:]
        attributeKinds = [:]
    }

    /// The newest known version.
    package var newest: ModelVersion? { versions.last }

    /// The known version of this `versionIdentifier`, if any.
    package func version(_ identifier: String) -> ModelVersion? {
        versions.first { $0.versionIdentifier == identifier }
    }

    /// The declaration of the known version of this `versionIdentifier`, if any.
    package func declaration(_ identifier: String) -> Schema? {
        declarations.first { $0.versionIdentifier == identifier }
    }

    /// `schema` with what the profile knows and its model cannot say: natural keys, singletons,
    /// merge rules and refined attribute kinds. Entities the profile does not name keep what
    /// `schema` has.
    package func applied(to schema: Schema) -> Schema {
        Schema(
            versionIdentifier: schema.versionIdentifier,
            entities: schema.entities.map { entity in
                var entity = entity
                if let kinds = attributeKinds[entity.name] {
                    for index in entity.attributes.indices {
                        if let kind = kinds[entity.attributes[index].name] { entity.attributes[index].kind = kind }
                    }
                }
                return entity
            },
            identities: schema.identities.merging(identities.filter { schema.entity(named: $0.key) != nil }) { _, profile in profile })
    }

    /// This profile with `schema` as its newest version (a proposed next version from a schema
    /// file, which states its own natural keys), replacing a known version of the same identifier.
    package func addingVersion(_ schema: Schema) -> AppProfile {
        var profile = self
        profile.declarations = declarations.filter { $0.versionIdentifier != schema.versionIdentifier } + [schema]
        profile.versions = versions.filter { $0.versionIdentifier != schema.versionIdentifier } + [ModelVersion(schema: schema)]
        return profile
    }

    /// Every known version of `profiles`, in order: the versions a store of one of these apps may be.
    package static func versions(of profiles: [AppProfile]) -> [ModelVersion] {
        profiles.flatMap(\.versions)
    }
}
