/// Whether Core Data can migrate a store from one model version to the next without custom code
/// (seeds 001 and 003: custom migrations crash with CloudKit, so lightweight is the only kind).
/// Returns one sentence per offending property; empty means lightweight.
package enum LightweightCheck {
    /// `dropping`: removals are accepted, as Core Data's inference accepts them (the entity's or
    /// property's data is then dropped, which the migration must report); otherwise each is a
    /// problem, since a rename without `originalName` looks just like one.
    public static func problems(from old: ModelVersion, to new: ModelVersion, dropping: Bool = false) -> [String] {
        var problems: [String] = []
        for oldEntity in old.entitiesInNameOrder {
            guard
                let newEntity = new.compiled.entity(named: oldEntity.name)
                    ?? new.entitiesInNameOrder.first(where: { $0.originalName == oldEntity.name })
            else {
                if !dropping {
                    problems.append("\(oldEntity.name): entity removed (a lightweight migration cannot delete an entity's data)")
                }
                continue
            }
            let renamedSources = Set(newEntity.attributes.compactMap(\.originalName))
            for attribute in oldEntity.attributes {
                let successor =
                    newEntity.attributes.first { $0.originalName == attribute.name }
                    ?? newEntity.attribute(named: attribute.name).flatMap { renamedSources.contains(attribute.name) ? nil : $0 }
                guard let successor else {
                    if dropping { continue }
                    problems.append(
                        "\(oldEntity.name).\(attribute.name): removed, or renamed without @Attribute(originalName: \"\(attribute.name)\")"
                            + " (in a schema file: \"originalName\": \"\(attribute.name)\" on the renamed attribute)")
                    continue
                }
                let label = "\(oldEntity.name).\(successor.name)"
                let oldKind = old.declaredKind(of: attribute, in: oldEntity.name)
                let newKind = new.declaredKind(of: successor, in: newEntity.name)
                if newKind != oldKind {
                    problems.append("\(label): type changes from \(oldKind.rawValue) to \(newKind.rawValue)")
                }
                if attribute.isOptional && !successor.isOptional && !new.hasDefault(successor, in: newEntity.name) {
                    problems.append("\(label): becomes required without a default, so existing nil values have nothing to become")
                }
            }
            let oldNames = Set(oldEntity.attributes.map(\.name))
            for attribute in newEntity.attributes where !oldNames.contains(attribute.name) && attribute.originalName == nil {
                if !attribute.isOptional && !new.hasDefault(attribute, in: newEntity.name) {
                    problems.append("\(newEntity.name).\(attribute.name): new required attribute without a default value")
                }
            }
            for relationship in oldEntity.relationships {
                guard
                    let successor = newEntity.relationships.first(where: { $0.originalName == relationship.name })
                        ?? newEntity.relationship(named: relationship.name)
                else {
                    if !dropping { problems.append("\(oldEntity.name).\(relationship.name): relationship removed") }
                    continue
                }
                let sameDestination =
                    successor.destination == relationship.destination
                    || new.compiled.entity(named: successor.destination)?.originalName == relationship.destination
                if !sameDestination || successor.isToMany != relationship.isToMany {
                    problems.append(
                        "\(oldEntity.name).\(relationship.name): relationship changes from \(relationship.isToMany ? "to-many" : "to-one") \(relationship.destination) to \(successor.isToMany ? "to-many" : "to-one") \(successor.destination)"
                    )
                }
            }
        }
        return problems
    }
}
