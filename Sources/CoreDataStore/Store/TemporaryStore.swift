import Foundation

// A temporary store is a store's files, not one file: in the Store layer, which knows a store's
// sidecars, on top of Support's announcements.
extension TemporaryFiles {
    /// A temporary store is announced with every sidecar SQLite may make beside it.
    package static func createdStore(_ url: URL) {
        for suffix in CoreDataSQL.storeFileSuffixes { created(url.path + suffix) }
    }

    /// Deletes a temporary store and its sidecars (those that exist) and says so.
    package static func removeStore(_ url: URL) {
        for suffix in CoreDataSQL.storeFileSuffixes {
            unlink(url.path + suffix)
            removed(url.path + suffix)
        }
    }
}
