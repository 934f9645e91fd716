import CoreDataStore

// Shorthands for tests that start from a declaration (a `Schema` literal or TimeQuest's): each
// compiles it as the engine does (`ModelVersion(schema:)`), so a test pins what the engine uses.

extension ModelVersionHashes {
    /// The hashes of the model `declaration` compiles to.
    package init(declaration: Schema) {
        self = ModelVersion(schema: declaration).hashes
    }
}

extension StoreMetadata {
    /// The metadata of a store of the model `declaration` compiles to.
    package init(declaration: Schema, uuid: String) {
        self.init(model: CompiledModel(schema: declaration), uuid: uuid)
    }
}
