import Foundation

/// The rules CloudKit sets on a model that `NSPersistentCloudKitContainer` (and SwiftData's
/// `cloudKitDatabase: .automatic`) mirrors, checked on a model version: one finding per property
/// that breaks one. A store that breaks none can sync; one that does is refused by the framework
/// at launch or silently not synced (seed 001, "Anti-Patterns to Avoid").
package enum CloudKitLint {
    public struct Finding: Sendable, Equatable, Encodable {
        public enum Rule: String, Sendable, Encodable, CaseIterable {
            case requiredWithoutDefault = "required-without-default"
            case requiredRelationship = "required-relationship"
            case uniqueConstraint = "unique-constraint"
            case denyDeleteRule = "deny-delete-rule"
            case orderedRelationship = "ordered-relationship"
            case noInverse = "no-inverse"
        }

        public var entity: String
        /// The property, or the properties of a uniqueness constraint joined by ", ".
        public var property: String
        public var rule: Rule
        public var message: String
    }

    public static func findings(_ model: ModelVersion) -> [Finding] {
        var findings: [Finding] = []
        for entity in model.entitiesInNameOrder {
            func add(_ property: String, _ rule: Finding.Rule, _ message: String) {
                findings.append(Finding(entity: entity.name, property: property, rule: rule, message: message))
            }
            for attribute in entity.attributes where !attribute.isOptional && !model.hasDefault(attribute, in: entity.name) {
                add(
                    attribute.name, .requiredWithoutDefault,
                    "a non-optional attribute needs a default value: CloudKit records may arrive without it")
            }
            for relationship in entity.relationships {
                if !relationship.isOptional {
                    add(relationship.name, .requiredRelationship, "CloudKit requires every relationship to be optional")
                }
                if relationship.rule == .deny {
                    add(relationship.name, .denyDeleteRule, "CloudKit does not support the deny delete rule")
                }
                if relationship.isOrdered {
                    add(relationship.name, .orderedRelationship, "CloudKit does not support ordered relationships (keep an order index)")
                }
                if relationship.inverse == nil {
                    add(relationship.name, .noInverse, "CloudKit requires every relationship to have an inverse")
                }
            }
            for constraint in entity.uniqueTuples {
                add(
                    constraint.joined(separator: ", "), .uniqueConstraint,
                    "CloudKit does not support unique constraints (#Unique, @Attribute(.unique))")
            }
        }
        return findings
    }
}
