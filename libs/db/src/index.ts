export * from './db';
export * from './migrate';
export { sql, type Kysely, type RawBuilder, type Transaction, type Selectable, type Insertable, type Updateable, type UpdateObject, type ExpressionBuilder, type ColumnType, type Generated } from 'kysely';
