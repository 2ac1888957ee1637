// Package webhook is the findings service's outbound webhooks: endpoints an
// organization registers through the API (POST/GET/DELETE /v1/webhooks) for
// chosen event types, the events written for them, and their delivery.
//
// Events are written in the transaction that causes them (a finding
// reported, triaged, commented on or reopened) or, for scans and
// estimations, by PublishEvent, which the scan and estimation services call
// from a River job inserted with their status change and which is
// idempotent by the event's id. An event is fanned out to one delivery row
// per subscribed webhook; nothing is written for an organization without a
// subscribed webhook.
//
// The delivery worker posts each due delivery with the Standard Webhooks
// headers (webhook-id: the event's id, the same on every attempt and
// redelivery; webhook-timestamp: Unix seconds of the attempt;
// webhook-signature: "v1," + base64 HMAC-SHA256 of "id.timestamp.body"
// under the secret's key, the base64 after "whsec_"). A 2xx answer delivers;
// anything else (redirects included) fails the attempt, which is retried
// after BaseBackoff·2^(attempt-1), capped at MaxBackoff, with ±20% jitter,
// until MaxAttempts; the delivery is then failed and can be redelivered on
// request. Connections go through pkg/netguard, so an address that stopped
// being public (DNS rebinding) is refused at delivery as at registration.
// The polling loop, lease and retry schedule are package outbox's, the same
// as the integration deliveries'.
package webhook
