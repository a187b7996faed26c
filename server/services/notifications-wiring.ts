import type { Db } from '../db';
import { createApprovalLinkService } from './approval-links';
import type { ApprovalService } from './approvals';
import type { AuditService } from './audit';
import type { LeaseService } from './leases';
import { createNotificationService } from './notifications';
import { createOutgoingWebhookService, type DeliveryOptions } from './outgoing-webhooks';
import type { PolicyService } from './policy';
import { createPolicySuggestionService } from './policy-suggestions';
import type { Broadcaster } from './ports';

/** The services of issue 19 items 2 and 3, built together (createServices spreads them in). */
export function createNotificationParts(
  db: Db,
  o: {
    secretKey: Buffer;
    audit: AuditService;
    /** Delivery claims across nodes (outgoing-webhooks.ts). */
    leases: LeaseService;
    policy: PolicyService;
    broadcast: () => Broadcaster;
    approvals: () => ApprovalService;
    publicOrigin?: () => string;
    webhookDelivery?: DeliveryOptions;
    allowsBeforeSuggesting?: number;
  },
) {
  const outgoingWebhooks = createOutgoingWebhookService(db, o.secretKey, o.audit, o.leases, o.webhookDelivery);
  const approvalLinks = createApprovalLinkService(db, o.secretKey, o.approvals);
  const notifications = createNotificationService(db, { broadcast: o.broadcast, webhooks: outgoingWebhooks, links: () => approvalLinks, publicOrigin: o.publicOrigin ?? (() => '') });
  const suggestions = createPolicySuggestionService(db, { policy: o.policy, audit: o.audit, allowsBeforeSuggesting: o.allowsBeforeSuggesting });
  return {
    /** Inbox, settings, and the one notify() every source calls (questStepFailed for quests). */
    notifications,
    /** The org's outgoing webhooks and their delivery log. */
    outgoingWebhooks,
    /** Signed one-time approve/deny links. */
    approvalLinks,
    /** "Always allow this" after repeated allows; applied by an admin. */
    suggestions,
  };
}
