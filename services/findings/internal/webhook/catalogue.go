package webhook

// Event types of the catalogue.
const (
	FindingCreated      = "finding.created"
	FindingUpdated      = "finding.updated"
	FindingCommented    = "finding.commented"
	ScanCompleted       = "scan.completed"
	ScanFailed          = "scan.failed"
	ScanCancelled       = "scan.cancelled"
	EstimationCompleted = "estimation.completed"
	EstimationFailed    = "estimation.failed"
)

// FindingBulkUpdated is the one message a bulk change sends to each
// webhook subscribed to FindingUpdated, carrying every changed finding; it
// is not subscribed to by itself.
const FindingBulkUpdated = "finding.bulk_updated"

// Catalogue lists every event type a webhook may subscribe to.
var Catalogue = []string{FindingCreated, FindingUpdated, FindingCommented, ScanCompleted, ScanFailed, ScanCancelled, EstimationCompleted, EstimationFailed}

// Published are the types other services publish through PublishEvent;
// finding events are written by the findings service itself.
var Published = []string{ScanCompleted, ScanFailed, ScanCancelled, EstimationCompleted, EstimationFailed}

// PayloadVersion is the version field of every payload. It changes only
// when a field is removed or changes meaning; new fields may be added.
const PayloadVersion = 1

func known(list []string, t string) bool {
	for _, x := range list {
		if x == t {
			return true
		}
	}
	return false
}
