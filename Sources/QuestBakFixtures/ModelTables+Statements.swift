import QuestBakKit

extension ModelTables {
    /// Every `CREATE` statement for the model's own tables, in Core Data's creation order:
    /// entity tables (join tables after them: inferred), then their indexes. Only fixture stores
    /// are made from a model; the library restores a store from its own statements.
    package var createStatements: [String] {
        tables.map(\.createStatement) + joinTables.map(\.createStatement) + tables.flatMap(\.indexStatements)
            + joinTables.map(\.indexStatement)
    }
}
