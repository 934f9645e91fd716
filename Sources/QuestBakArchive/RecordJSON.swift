import CoreDataStore
import Foundation

/// The keys of a record line, the archive's entity-member format (docs/archive-format.md): `_pk`
/// first, `_opt`, then the entity's stored properties (attributes, then to-one relationships, each
/// sorted by name), every value written by `ValueJSON`.
package enum RecordJSON {
    package static let primaryKeyKey = "_pk"
    /// The record's `Z_OPT` (format version 2 on).
    package static let optKey = "_opt"
}
