import CoreDataStore
import QuestBakArchive

/// The records of one natural key, as dedup walks them in `Z_PK` order: which are kept and which
/// join a keeper. A record joins the first keeper that has no cloudID, or has its own, or any
/// keeper when it has none itself; a keeper never stands for two different cloudIDs.
///
/// Keepers are found through a dictionary and a queue, not by scanning: a group of 40,000 records
/// with distinct cloudIDs (all of them keepers) costs linear time, not quadratic.
struct DuplicateGroup {
    private(set) var key: [StoredValue]
    private var keepers: [(primaryKey: Int64, cloudID: String?)] = []
    /// The first keeper standing for each cloudID.
    private var keeperByCloudID: [String: Int] = [:]
    /// Keepers without a cloudID, ascending; those before `nextWithoutCloudID` have since taken one.
    private var keepersWithoutCloudID: [Int] = []
    private var nextWithoutCloudID = 0
    /// Whether two well-formed cloudIDs that differ make two records; when not, every record of
    /// the key joins the first (the natural key is the identity).
    private let distinctIDsAreDistinct: Bool

    init(key: [StoredValue] = [], distinctIDsAreDistinct: Bool = true) {
        self.key = key
        self.distinctIDsAreDistinct = distinctIDsAreDistinct
    }

    /// The keeper the record joins and the cloudID it carries over to it (when the keeper had
    /// none), or nil when the record is a keeper itself.
    mutating func keeper(for primaryKey: Int64, cloudID: String?) -> (keeper: Int64, carried: String?)? {
        if !distinctIDsAreDistinct, !keepers.isEmpty {
            // One record per key: the first keeps its cloudID, or takes the first it is offered.
            guard keepers[0].cloudID == nil, let cloudID else { return (keepers[0].primaryKey, nil) }
            keepers[0].cloudID = cloudID
            return (keepers[0].primaryKey, cloudID)
        }
        let firstWithout = nextWithoutCloudID < keepersWithoutCloudID.count ? keepersWithoutCloudID[nextWithoutCloudID] : nil
        let candidate: Int?
        if let cloudID {
            candidate = [firstWithout, keeperByCloudID[cloudID]].compactMap { $0 }.min()
        } else {
            candidate = keepers.isEmpty ? nil : 0
        }
        guard let index = candidate else {
            if let cloudID {
                keeperByCloudID[cloudID] = keepers.count
            } else {
                keepersWithoutCloudID.append(keepers.count)
            }
            keepers.append((primaryKey, cloudID))
            return nil
        }
        // A keeper without a cloudID takes its duplicate's, so CloudKit's record survives.
        guard keepers[index].cloudID == nil, let cloudID else { return (keepers[index].primaryKey, nil) }
        keepers[index].cloudID = cloudID
        keeperByCloudID[cloudID] = index
        nextWithoutCloudID += 1  // `index` was the first keeper without one
        return (keepers[index].primaryKey, cloudID)
    }
}

extension StoredValue {
    /// Whether two natural keys are one key as SQLite compares them (BINARY collation): text and
    /// BLOBs byte for byte, so `Café` in NFC and in NFD are two keys, numbers by value.
    static func sameKey(_ lhs: [StoredValue], _ rhs: [StoredValue]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return zip(lhs, rhs).allSatisfy { pair in
            switch pair {
            case (.integer(let a), .real(let b)), (.real(let b), .integer(let a)): return Double(exactly: a) == b
            default: return pair.0 == pair.1
            }
        }
    }
}
