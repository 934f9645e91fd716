import CoreDataStore
import QuestBakArchive

/// The library's front door: every verb an app needs (back up, verify, restore, merge, migrate,
/// gate a migration, inspect, diff, rescue a store it cannot open) is a static function of
/// `QuestBak`, in `API/`.
public enum QuestBak {
    /// This library's version, stamped into every archive's manifest.
    public static let version = "0.1.0"
}
