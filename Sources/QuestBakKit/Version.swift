import CoreDataStore
import QuestBakArchive

public enum QuestBak { public static let version = "0.1.0" }
