/** Billing periods, the usage ledger and quotas.json persistence. */
export {
  daysInMonth,
  daysUntil,
  isCalendarDay,
  isLeapYear,
  nextReset,
  periodInForce,
  periodStart,
  utcDay,
} from './billing-period.js';
export {
  LocalUsageLedger,
  seedLedger,
  type QuotaEntry,
  type QuotaSnapshot,
  type RetiredUsage,
  type UsageCounter,
  type UsageLedger,
} from './usage-ledger.js';
export {
  LONG_GAP_DAYS,
  assignMarker,
  rollover,
  type AdoptedEvent,
  type PeriodNode,
  type ResetEvent,
  type RolloverEvent,
} from './rollover.js';
export { QUOTA_FILE_HINT, formatQuotaFile, parseQuotaFile } from './quota-format.js';
export { QuotaWriteError, readQuotaFile, writeQuotaFile } from './quota-file.js';
export {
  QuotaFlusher,
  type FlushTickResult,
  type NodeSetChange,
  type QuotaFlusherOptions,
  type RestoreResult,
} from './quota-flusher.js';
export {
  accountQuotaReport,
  quotaReport,
  type AccountQuotaRow,
  type QuotaRow,
  type UsageReading,
} from './quota-report.js';
export {
  acquireServerLock,
  lockPathOf,
  readServerLock,
  refreshServerLock,
  releaseServerLock,
  type ServerLock,
} from './server-lock.js';
export {
  fetchQuota,
  fetchQuotaRows,
  resetThroughServer,
  type QuotaDocument,
} from './admin-client.js';
export { resetQuotaFile } from './quota-reset.js';
