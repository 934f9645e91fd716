import Foundation

// What the front door's verbs return. These are the engine's own result types (the pipelines
// build them; `Importer.Result` and its kin are package names for them), declared here so that
// the pipelines' hosts stay `package`: an app sees `QuestBak.RestoreResult`, never `Importer`.
//
// Files are `URL`s. The command line's JSON reports write them as the paths they always wrote
// (`URL.path`, or the name the command line gave an input it read from a stream), which is why
// each type with a file says how it is encoded.

extension QuestBak {
    /// What ``QuestBak/backUp(store:to:options:progress:)`` wrote: the archive, its members and
    /// their digests, and what is odd about the store.
    public struct BackupResult: Sendable, Encodable {
        /// The archive written; nil when it was written to a stream rather than a file.
        public var archive: URL?
        /// How the members are compressed: `zstd`, `gzip` or `none`.
        public var compression: String
        /// The archive's size in bytes, once it is in place.
        public var archiveBytes: Int64?
        /// The store's model version identifier ("" when it has none).
        public var schemaVersion: String
        /// How the records are written: `timequest`, `model` (by the store's own model) or
        /// `generic` (by its tables).
        public var schema: String
        /// Committed frames that were only in the store's `-wal` when it was read, and are in the
        /// archive.
        public var walFrames: Int
        /// One member per entity: its records, digest and size.
        public var entities: [ArchiveManifest.EntityMember]
        /// The store's metadata, model cache and external-storage files, carried as they are.
        public var files: [ArchiveManifest.FileMember]
        /// Tables that belong to no entity, carried too (a many-to-many join table, a tool's table).
        public var tables: [ArchiveManifest.TableMember]
        /// What is odd about the store, as ``QuestBak/inspect(store:schemas:)`` says it (a `Z_MAX`
        /// below the largest `Z_PK`, a model cache that disagrees with the metadata): backed up
        /// as it is, and said.
        public var warnings: [String]
        /// "age, 2 recipients" or "age, passphrase" when the archive is encrypted.
        public var encryption: String?
        /// With ``QuestBak/BackupOptions/verify``: what restoring the archive gave back (every
        /// entity's digest the member's).
        public var verification: Verification?

        /// The proof ``QuestBak/BackupOptions/verify`` asks for.
        public struct Verification: Sendable, Encodable {
            /// Records restored and compared, across every entity.
            public var records: Int
            /// Entities compared.
            public var entities: Int
        }

        enum CodingKeys: String, CodingKey {
            case archive, compression, archiveBytes, schemaVersion, schema, walFrames, entities, files, tables, warnings
            case encryption, verification
        }

        /// The archive as its path ("standard output" for a stream); every other field as it is.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(archive?.path ?? "standard output", forKey: .archive)
            try container.encode(compression, forKey: .compression)
            try container.encodeIfPresent(archiveBytes, forKey: .archiveBytes)
            try container.encode(schemaVersion, forKey: .schemaVersion)
            try container.encode(schema, forKey: .schema)
            try container.encode(walFrames, forKey: .walFrames)
            try container.encode(entities, forKey: .entities)
            try container.encode(files, forKey: .files)
            try container.encode(tables, forKey: .tables)
            try container.encode(warnings, forKey: .warnings)
            try container.encodeIfPresent(encryption, forKey: .encryption)
            try container.encodeIfPresent(verification, forKey: .verification)
        }
    }

    /// What ``QuestBak/verify(archive:options:progress:)`` found: whether the archive restores
    /// exactly, entity by entity.
    public struct VerifyResult: Sendable, Encodable {
        /// The archive verified.
        public var archive: URL
        /// How the archive is named in messages and reports: its path as given.
        package var archiveName: String
        /// How its records were written: `timequest`, `model` or `generic`.
        public var schema: String
        /// The archive's format version.
        public var formatVersion: Int
        /// Whether every entity came back with its member's digest and nothing needed a repair.
        public var restoresExactly: Bool
        /// Every entity's check.
        public var entities: [EntityCheck]
        /// What a restore would change, by `kind.rule` (repairs, data the target cannot hold).
        public var counts: [String: Int]
        /// What the restore did to the store as a whole, one sentence each.
        public var notes: [String]

        /// One entity's records restored and compared with their member.
        public struct EntityCheck: Sendable, Encodable {
            /// The entity's name.
            public var name: String
            /// Records restored.
            public var records: Int
            /// The member's SHA-256, as the manifest gives it.
            public var archived: String
            /// The SHA-256 of the restored records, encoded again.
            public var restored: String
            /// Whether the two digests are equal.
            public var same: Bool
        }

        enum CodingKeys: String, CodingKey {
            case archive, schema, formatVersion, restoresExactly, entities, counts, notes
        }

        /// The archive by the name it was given; every other field as it is.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(archiveName, forKey: .archive)
            try container.encode(schema, forKey: .schema)
            try container.encode(formatVersion, forKey: .formatVersion)
            try container.encode(restoresExactly, forKey: .restoresExactly)
            try container.encode(entities, forKey: .entities)
            try container.encode(counts, forKey: .counts)
            try container.encode(notes, forKey: .notes)
        }
    }

    /// What ``QuestBak/restore(archive:into:options:progress:)`` did: records by entity, repairs
    /// by rule, the store set aside.
    public struct RestoreResult: Encodable {
        /// The archive read.
        public var archive: URL
        /// How the archive is named in messages and reports: its path as given, or the stream's
        /// name.
        package var archiveName: String
        /// The restored store; nil when nothing was written.
        public var target: URL?
        /// Whether this was a dry run, which writes no store.
        public var dryRun: Bool
        /// The archive's schema version.
        public var sourceSchemaVersion: String
        /// The restored store's schema version.
        public var targetSchemaVersion: String
        /// Records read and written, by entity.
        public var entities: [Entity]
        /// Entries by `kind.rule`.
        public var counts: [String: Int]
        /// Repairs made to records (the `repair.` counts summed).
        public var repairs: Int
        /// Every change to the data, repairs and migration changes alike (`counts` summed).
        public var changes: Int
        /// Where a replaced store was kept, if one was.
        public var backup: URL?
        /// The backup's files: the store and the `-wal` and `-shm` it had.
        public var backupFiles: [URL]
        /// What the restore did to the store as a whole (metadata recomputed, and why).
        public var notes: [String]
        /// Every repair and change, counted; the API writes its entries out with `repairLog`.
        package let log: RepairLog

        /// What a restore did with one entity's records.
        public struct Entity: Sendable, Encodable {
            /// The entity's name.
            public var name: String
            /// Records read from the archive.
            public var read: Int
            /// Records in the restored store (after repairs).
            public var written: Int
            /// SHA-256 of the entity's member as a backup of the new store will write it.
            public var sha256: String
        }

        enum CodingKeys: String, CodingKey {
            // One vocabulary with a migration's result: what was read is the source, what was
            // written the target.
            case archive = "source"
            case target, dryRun, sourceSchemaVersion, targetSchemaVersion, entities, counts, repairs, changes, backup, backupFiles, notes
        }

        /// The archive by the name it was given, files as paths; every other field as it is.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(archiveName, forKey: .archive)
            try container.encodeIfPresent(target?.path, forKey: .target)
            try container.encode(dryRun, forKey: .dryRun)
            try container.encode(sourceSchemaVersion, forKey: .sourceSchemaVersion)
            try container.encode(targetSchemaVersion, forKey: .targetSchemaVersion)
            try container.encode(entities, forKey: .entities)
            try container.encode(counts, forKey: .counts)
            try container.encode(repairs, forKey: .repairs)
            try container.encode(changes, forKey: .changes)
            try container.encodeIfPresent(backup?.path, forKey: .backup)
            try container.encode(backupFiles.map(\.path), forKey: .backupFiles)
            try container.encode(notes, forKey: .notes)
        }
    }

    /// Which value a field keeps in ``QuestBak/merge(archive:into:options:progress:)`` when the
    /// store and the archive both have one and they differ.
    public enum MergePreference: String, CaseIterable, Sendable, Encodable {
        /// The store's (the default): the archive only fills what the store lacks.
        case store
        /// The archive's: the merge overwrites what differs.
        case archive
        /// The copy whose date property (``QuestBak/MergeOptions/newerBy``, or `updatedAt` and
        /// its kin) is later; a dated copy is newer than an undated one, and when neither is
        /// dated the store's wins.
        case newer
    }

    /// What ``QuestBak/merge(archive:into:options:progress:)`` did: records by entity, every
    /// insert, fill and conflict counted.
    public struct MergeResult: Encodable {
        /// The archive merged.
        public var archive: URL
        /// How the archive is named in messages and reports: its path as given, or the stream's
        /// name.
        package var archiveName: String
        /// The store merged into.
        public var target: URL
        /// Whether this was a dry run, which leaves the store as it is.
        public var dryRun: Bool
        /// The merge found nothing to add or change: the store was left as it was.
        public var unchanged: Bool
        /// The store's model version.
        public var schemaVersion: String
        /// Which value a field kept when both had one.
        public var preference: MergePreference
        /// Records matched, inserted and changed, by entity.
        public var entities: [Entity]
        /// Entries by `kind.rule`.
        public var counts: [String: Int]
        /// Every change to the store (`counts` summed).
        public var changes: Int
        /// Repairs made to the archive's own records before the merge, by `kind.rule`.
        public var archiveRepairs: [String: Int]
        /// Where the store before the merge was kept; nil when the merge changed nothing.
        public var backup: URL?
        /// The kept store's files: the store and the `-wal` and `-shm` it had.
        public var backupFiles: [URL]
        /// What the merge did to the store as a whole, one sentence each.
        public var notes: [String]
        /// Every insert, fill, conflict and repair, counted.
        package let log: RepairLog

        /// What a merge did with one entity's records.
        public struct Entity: Sendable, Encodable {
            /// The entity's name.
            public var name: String
            /// Records of the store before the merge.
            public var store: Int
            /// Records of the archive (after its own repairs).
            public var archive: Int
            /// Archive records found in the store, by the identity that matched them.
            public var matched: [String: Int]
            /// Archive records the store lacked, inserted.
            public var inserted: Int
            /// Store records whose values the merge changed.
            public var changed: Int
            /// Records of the merged store.
            public var written: Int
        }

        enum CodingKeys: String, CodingKey {
            case archive = "source"
            case target, dryRun, unchanged, schemaVersion, preference, entities, counts, changes, archiveRepairs, backup
            case backupFiles, notes
        }

        /// The archive by the name it was given, files as paths; every other field as it is.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(archiveName, forKey: .archive)
            try container.encode(target.path, forKey: .target)
            try container.encode(dryRun, forKey: .dryRun)
            try container.encode(unchanged, forKey: .unchanged)
            try container.encode(schemaVersion, forKey: .schemaVersion)
            try container.encode(preference, forKey: .preference)
            try container.encode(entities, forKey: .entities)
            try container.encode(counts, forKey: .counts)
            try container.encode(changes, forKey: .changes)
            try container.encode(archiveRepairs, forKey: .archiveRepairs)
            try container.encodeIfPresent(backup?.path, forKey: .backup)
            try container.encode(backupFiles.map(\.path), forKey: .backupFiles)
            try container.encode(notes, forKey: .notes)
        }
    }

    /// What ``QuestBak/migrate(store:toModelOf:output:options:progress:)`` or
    /// ``QuestBak/migrate(store:toVersion:of:output:options:progress:)`` did: the versions,
    /// every change counted, the store set aside.
    public struct MigrateResult: Encodable {
        /// The store migrated (the source).
        public var store: URL
        /// The migrated store (the output; the source itself for a migration in place).
        public var output: URL
        /// The source's model version.
        public var sourceSchemaVersion: String
        /// The new model's version.
        public var targetSchemaVersion: String
        /// Every change, by `kind.rule`.
        public var counts: [String: Int]
        /// Where the store was kept when it was migrated in place.
        public var backup: URL?
        /// The backup's files: the store and the `-wal` and `-shm` it had.
        public var backupFiles: [URL]
        /// Every change the migration made, counted (the last step's, for a chain).
        package let log: RepairLog
        /// A chain's earlier steps' logs (the last step's is `log`), oldest first.
        package var earlierLogs: [RepairLog] = []
        /// What the migration did to the store as a whole, one sentence each; nil when nothing.
        public var notes: [String]?

        enum CodingKeys: String, CodingKey {
            // One vocabulary with a restore's result: what was read is the source, what was
            // written the target.
            case store = "source"
            case output = "target"
            case sourceSchemaVersion, targetSchemaVersion, counts, backup, backupFiles, notes
        }

        /// Files as paths; every other field as it is.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(store.path, forKey: .store)
            try container.encode(output.path, forKey: .output)
            try container.encode(sourceSchemaVersion, forKey: .sourceSchemaVersion)
            try container.encode(targetSchemaVersion, forKey: .targetSchemaVersion)
            try container.encode(counts, forKey: .counts)
            try container.encodeIfPresent(backup?.path, forKey: .backup)
            try container.encode(backupFiles.map(\.path), forKey: .backupFiles)
            try container.encodeIfPresent(notes, forKey: .notes)
        }
    }

    /// What ``QuestBak/diff(_:_:options:progress:eachRecord:)`` found between A and B.
    public struct DiffResult: Sendable, Encodable {
        /// A, a store or an archive.
        public var a: URL
        /// B, a store or an archive.
        public var b: URL
        /// "records", or "tables" when one side is an archive by a model and the other by tables.
        public var comparedBy: String
        /// Every entity's counts, by name.
        public var entities: [Entity]
        /// Records only in B, across entities.
        public var added: Int
        /// Records only in A, across entities.
        public var removed: Int
        /// Records whose fields differ, across entities.
        public var changed: Int

        /// Nothing differs: no record added, removed or changed, and no property on one side only.
        public var isEmpty: Bool {
            added == 0 && removed == 0 && changed == 0 && entities.allSatisfy { $0.fieldsOnlyInA.isEmpty && $0.fieldsOnlyInB.isEmpty }
        }

        /// One entity's counts.
        public struct Entity: Sendable, Encodable {
            /// The entity's name.
            public var name: String
            /// How records were matched, in the order tried: "cloudID", "uniqueness constraint
            /// (…)", "natural key (…)", "singleton", "content"; the ones that matched at least
            /// one record.
            public var matchedBy: String
            /// Records only in B.
            public var added: Int
            /// Records only in A.
            public var removed: Int
            /// Records in both with other values.
            public var changed: Int
            /// Properties only B's records have (added by a migration).
            public var fieldsOnlyInB: [String]
            /// Properties only A's records have.
            public var fieldsOnlyInA: [String]

            /// Nothing of the entity's records differs.
            public var isEmpty: Bool { added == 0 && removed == 0 && changed == 0 }
        }

        /// One differing record, as the diff's `eachRecord` is given it.
        public enum Line: Sendable {
            /// A record only B has ("_pk 12", with its cloudID when it has a well-formed one).
            case added(String)
            /// A record only A has, named the same way.
            case removed(String)
            /// A record in both whose fields differ.
            case changed(Changed)
        }

        /// A record in both with fields that differ.
        public struct Changed: Sendable, Encodable {
            /// The identity it was matched by.
            public var identity: String
            /// The fields that differ.
            public var fields: [FieldChange]
        }

        /// One field of a record that differs.
        public struct FieldChange: Sendable, Encodable {
            /// The property's (or column's) name.
            public var field: String
            /// Its value in A, as JSON.
            public var old: String
            /// Its value in B, as JSON.
            public var new: String
        }

        enum CodingKeys: String, CodingKey {
            case a, b, comparedBy, entities, added, removed, changed
        }

        /// Both sides as paths; every other field as it is.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(a.path, forKey: .a)
            try container.encode(b.path, forKey: .b)
            try container.encode(comparedBy, forKey: .comparedBy)
            try container.encode(entities, forKey: .entities)
            try container.encode(added, forKey: .added)
            try container.encode(removed, forKey: .removed)
            try container.encode(changed, forKey: .changed)
        }
    }

    /// One check of one fixture store by ``QuestBak/gateMigration(fixtures:toModelOf:options:report:)``.
    public struct GateCheck: Sendable, Encodable {
        /// The fixture store's path relative to the fixtures folder: the fixture's name, as its
        /// golden dump is named.
        public var fixture: String
        /// What was checked: `read`, `migrate`, `golden`, `invariants`, `valid`, `round-trip`.
        public var name: String
        /// Whether the check passed.
        public var passed: Bool
        /// What was checked, or why it failed (a diff for golden dumps).
        public var detail: String
        /// For a golden check that failed because the fixture has no golden dump yet: the file
        /// name it looked for. How to record one is the caller's to say.
        public var missingExpectation: String?
        /// For a golden check whose expectation was recorded in an earlier form of the dump: its
        /// file name. How to record it again is the caller's to say.
        public var earlierDumpFormat: String?
        /// For a read that failed because the fixture is another app's store (it shares no
        /// entity with the schemas checked): how to check it instead is the caller's to say.
        public var anotherAppsStore = false
    }

    /// What ``QuestBak/rescue(store:into:options:)`` saved.
    public struct RescueResult: Sendable, Encodable {
        /// The store that was rescued.
        public var store: URL
        /// The rescue's folder: the copy in `store-files`, the archive `store.qbak`.
        public var folder: URL
        /// Every file (and link) of the copy, in the folder's `store-files`.
        public var copiedFiles: [URL]
        /// The bytes of those files.
        public var copiedBytes: Int64
        /// What the store's support folder holds that is neither file, folder nor link: not copied.
        public var notCopied: [URL]
        /// The verified archive; nil when the backup failed (then ``exportFailure`` says why, and
        /// the copy is all there is).
        public var archive: URL?
        /// Why the backup failed, one sentence; nil when it did not.
        public var exportFailure: String?
        /// The backup's own error, as ``QuestBakError`` would carry it underneath, when it failed.
        public var exportError: (any Error)?
        /// The store's model's version identifier, as the archive records it.
        public var schemaVersion: String?
        /// Records by entity, each restored from the archive and compared before it was kept.
        public var entities: [String: Int]
        /// All the records of ``entities``.
        public var records: Int
        /// What is odd about the store, as the backup says it.
        public var warnings: [String]

        /// Whether the archive was written and verified.
        public var exported: Bool { archive != nil }

        enum CodingKeys: String, CodingKey {
            case store, folder, copiedFiles, copiedBytes, notCopied, archive, exportFailure, schemaVersion, entities, records, warnings
        }

        /// Files as paths; every other field but the typed error as it is.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(store.path, forKey: .store)
            try container.encode(folder.path, forKey: .folder)
            try container.encode(copiedFiles.map(\.path), forKey: .copiedFiles)
            try container.encode(copiedBytes, forKey: .copiedBytes)
            try container.encode(notCopied.map(\.path), forKey: .notCopied)
            try container.encodeIfPresent(archive?.path, forKey: .archive)
            try container.encodeIfPresent(exportFailure, forKey: .exportFailure)
            try container.encodeIfPresent(schemaVersion, forKey: .schemaVersion)
            try container.encode(entities, forKey: .entities)
            try container.encode(records, forKey: .records)
            try container.encode(warnings, forKey: .warnings)
        }
    }

    /// What ``QuestBak/mergeRescue(from:into:options:)`` did with a rescue.
    public struct RescueMergeResult: Sendable, Encodable {
        /// Merged as it was, migrated and merged, or kept for a newer build.
        public var outcome: Outcome
        /// The rescue's archive.
        public var archive: URL
        /// The fresh store the records were merged into.
        public var store: URL
        /// The version identifier of the archive's model.
        public var archiveSchemaVersion: String
        /// The version identifier of the fresh store's model.
        public var storeSchemaVersion: String
        /// Per entity of the fresh store's model: records matched, inserted, changed.
        public var entities: [MergeResult.Entity]
        /// Records the merge added to the fresh store.
        public var inserted: Int
        /// What the fresh store's model has no place for, every value of it.
        public var unplaced: [Unplaced]
        /// What the migration changed on the way, by `kind.rule` (defaults filled, cloudIDs made,
        /// values with no place).
        public var migrationCounts: [String: Int]
        /// What the merge did, by `kind.rule`.
        public var mergeCounts: [String: Int]
        /// Repairs the archive's own records needed before they could be merged (duplicates of a
        /// uniqueness constraint, links to nothing), by `kind.rule`, as a restore makes them; the
        /// archive keeps the records as they were.
        public var archiveRepairs: [String: Int]
        /// Every entry of the migration and the merge, one JSON object a line; nil when nothing
        /// was merged.
        public var report: URL?
        /// The fresh store as it was before the merge, kept beside it.
        public var backupFiles: [URL]
        /// What the call did as a whole (a migration's notes, why nothing was merged), one
        /// sentence each.
        public var notes: [String]

        /// How the rescued records reached the fresh store, or why they did not.
        public enum Outcome: String, Sendable, Encodable {
            /// The archive's model is the fresh store's: its records were merged as they are.
            case merged
            /// The archive's model is older: it was migrated to the fresh store's model (as
            /// ``QuestBak/migrate(store:toModelOf:output:options:progress:)`` migrates a store),
            /// then merged.
            case migratedAndMerged
            /// The archive's model is newer than the app's: nothing was merged. The archive and
            /// the copy of the store's files are kept for a build that knows that model.
            case keptNewer
        }

        /// A value, or a whole record, the fresh store's model has no place for (a removed
        /// attribute, relationship or entity): not merged, and kept in the result and the report.
        public struct Unplaced: Sendable, Encodable, Equatable {
            /// The record's entity in the rescued store's model.
            public var entity: String
            /// The record's `Z_PK` in the rescued store.
            public var primaryKey: Int64
            /// The property; nil when the whole record has no place (its entity is gone).
            public var field: String?
            /// The value (or the record's values), as JSON.
            public var value: String
        }

        enum CodingKeys: String, CodingKey {
            case outcome, archive, store, archiveSchemaVersion, storeSchemaVersion, entities, inserted, unplaced
            case migrationCounts, mergeCounts, archiveRepairs, report, backupFiles, notes
        }

        /// Files as paths; every other field as it is.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(outcome, forKey: .outcome)
            try container.encode(archive.path, forKey: .archive)
            try container.encode(store.path, forKey: .store)
            try container.encode(archiveSchemaVersion, forKey: .archiveSchemaVersion)
            try container.encode(storeSchemaVersion, forKey: .storeSchemaVersion)
            try container.encode(entities, forKey: .entities)
            try container.encode(inserted, forKey: .inserted)
            try container.encode(unplaced, forKey: .unplaced)
            try container.encode(migrationCounts, forKey: .migrationCounts)
            try container.encode(mergeCounts, forKey: .mergeCounts)
            try container.encode(archiveRepairs, forKey: .archiveRepairs)
            try container.encodeIfPresent(report?.path, forKey: .report)
            try container.encode(backupFiles.map(\.path), forKey: .backupFiles)
            try container.encode(notes, forKey: .notes)
        }
    }
}
