package ctl

import (
	"context"
	"flag"
	"fmt"
	"strings"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

func webhookAdmin(e *Env) findingsv1.WebhookAdminServiceClient {
	return findingsv1.NewWebhookAdminServiceClient(e.conn("findings"))
}

// leadingID takes an id given as the first argument ("webhook deliveries
// ID") and returns the remaining flags.
func leadingID(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

func deliveryJSON(d *findingsv1.WebhookDelivery) map[string]any {
	var code, lastErr any
	if d.GetLastStatusCode() != nil {
		code = d.GetLastStatusCode().GetValue()
	}
	if d.GetLastError() != nil {
		lastErr = d.GetLastError().GetValue()
	}
	return map[string]any{"id": d.GetId(), "webhook_id": d.GetWebhookId(), "event_id": d.GetEventId(), "event": d.GetEvent(),
		"status": d.GetStatus(), "attempts": d.GetAttempts(), "last_status_code": code, "last_error": lastErr,
		"created_at": tsOrNil(d.GetCreatedAt()), "last_attempt_at": tsOrNil(d.GetLastAttemptAt()),
		"next_attempt_at": tsOrNil(d.GetNextAttemptAt()), "delivered_at": tsOrNil(d.GetDeliveredAt())}
}

func init() {
	groupDocs["webhook"] = "organizations' outbound webhooks and their deliveries"
	docs["webhook list"] = doc{"List an organization's webhooks (URLs without query strings, never their secrets).",
		[]string{"vulnscanctl webhook list --org ORG_ID"}}
	docs["webhook deliveries"] = doc{"Page through a webhook's delivery log, newest first: event, status, attempts, last status code and error.",
		[]string{"vulnscanctl webhook deliveries WEBHOOK_ID", "vulnscanctl webhook deliveries --webhook WEBHOOK_ID --page 2 --limit 100"}}
	docs["webhook redeliver"] = doc{"Send a delivery again now, with the same webhook-id, as a new attempt.",
		[]string{"vulnscanctl webhook redeliver DELIVERY_ID", "vulnscanctl webhook redeliver --delivery DELIVERY_ID"}}
	Register(
		Command{Group: "webhook", Verb: "list", Usage: "--org ORG",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				org := fs.String("org", "", "organization id")
				if err := Parse(fs, args, "org"); err != nil {
					return nil, err
				}
				r, err := webhookAdmin(e).AdminListWebhooks(ctx, &findingsv1.AdminListWebhooksRequest{OrgId: *org})
				if err != nil {
					return nil, err
				}
				data := make([]map[string]any, 0, len(r.GetData()))
				for _, w := range r.GetData() {
					events := w.GetEvents()
					if events == nil {
						events = []string{}
					}
					data = append(data, map[string]any{"id": w.GetId(), "url": w.GetUrl(), "events": events,
						"description": w.GetDescription(), "created_at": tsOrNil(w.GetCreatedAt())})
				}
				return map[string]any{"data": data, "total": r.GetTotal()}, nil
			}},
		Command{Group: "webhook", Verb: "deliveries", Usage: "WEBHOOK_ID | --webhook WEBHOOK_ID [--page N] [--limit N]",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				id, rest := leadingID(args)
				webhook := fs.String("webhook", id, "webhook id (or give it as the first argument)")
				page := fs.Int("page", 1, "page, from 1")
				limit := fs.Int("limit", 50, "deliveries per page, 1 to 100")
				if err := Parse(fs, rest); err != nil {
					return nil, err
				}
				if *webhook == "" {
					return nil, usageError{fmt.Errorf("--webhook is required (or give the id as the first argument)")}
				}
				r, err := webhookAdmin(e).AdminListWebhookDeliveries(ctx, &findingsv1.AdminListWebhookDeliveriesRequest{WebhookId: *webhook,
					Page: int32(*page), Limit: int32(*limit)})
				if err != nil {
					return nil, err
				}
				data := make([]map[string]any, 0, len(r.GetData()))
				for _, d := range r.GetData() {
					data = append(data, deliveryJSON(d))
				}
				return map[string]any{"data": data, "total": r.GetTotal(), "page": r.GetPage(), "limit": r.GetLimit()}, nil
			}},
		Command{Group: "webhook", Verb: "redeliver", Usage: "DELIVERY_ID | --delivery DELIVERY_ID",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				id, rest := leadingID(args)
				delivery := fs.String("delivery", id, "delivery id (or give it as the first argument)")
				if err := Parse(fs, rest); err != nil {
					return nil, err
				}
				if *delivery == "" {
					return nil, usageError{fmt.Errorf("--delivery is required (or give the id as the first argument)")}
				}
				r, err := webhookAdmin(e).AdminRedeliverWebhookDelivery(ctx, &findingsv1.AdminRedeliverWebhookDeliveryRequest{DeliveryId: *delivery})
				if err != nil {
					return nil, err
				}
				return deliveryJSON(r), nil
			}},
	)
}
