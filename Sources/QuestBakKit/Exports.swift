// One import for an app: `import QuestBakKit` brings the store and archive types its API names
// (`Schema`, `Value`, `ArchiveKeys`…) without the app having to know how the library is split.
@_exported import CoreDataStore
@_exported import QuestBakArchive
