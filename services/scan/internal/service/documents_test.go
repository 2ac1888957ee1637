package service_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

func TestCreateContextDocumentValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for name, tc := range map[string]struct {
		name, content, msg string
	}{
		"no name":      {"  ", "x", "name is required"},
		"long name":    {strings.Repeat("n", 201), "x", "name must be at most 200 characters"},
		"no content":   {"doc", "", "content is required"},
		"long content": {"doc", strings.Repeat("c", 100_001), "content must be at most 100000 characters"},
		"binary":       {"doc", "a\x00b", "content must be text"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := e.svc.CreateContextDocument(e.ctx, &scanv1.CreateContextDocumentRequest{Name: tc.name, Content: tc.content})
			requireStatus(t, err, codes.InvalidArgument, tc.msg)
		})
	}
	list, err := e.svc.ListContextDocuments(e.ctx, &scanv1.ListContextDocumentsRequest{})
	require.NoError(t, err)
	require.Zero(t, list.GetTotal(), "no refused document was stored")
}

// TestContextDocumentsRoundTrip: a document's size counts characters, not
// bytes; the list omits content; get returns it; other organizations' and
// unknown ids are not found.
func TestContextDocumentsRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	created, err := e.svc.CreateContextDocument(e.ctx, &scanv1.CreateContextDocumentRequest{Name: "  Läufe  ", Content: "größe ✓"})
	require.NoError(t, err)
	doc := created.GetDocument()
	require.Equal(t, "Läufe", doc.GetName(), "the name is trimmed")
	require.Equal(t, int32(7), doc.GetSize())
	require.NoError(t, uuid.Validate(doc.GetId()))

	list, err := e.svc.ListContextDocuments(e.ctx, &scanv1.ListContextDocumentsRequest{})
	require.NoError(t, err)
	require.Equal(t, int32(1), list.GetTotal())
	require.Equal(t, doc.GetId(), list.GetData()[0].GetId())

	got, err := e.svc.GetContextDocument(e.ctx, &scanv1.GetContextDocumentRequest{Id: doc.GetId()})
	require.NoError(t, err)
	require.Equal(t, "größe ✓", got.GetDocument().GetContent())

	other := newEnv(t)
	other.svc.Store = e.st // the same database, another organization
	for name, tc := range map[string]struct {
		svcEnv *env
		id     string
		code   codes.Code
		msg    string
	}{
		"not a uuid": {e, "x", codes.InvalidArgument, "id must be a valid UUID"},
		"unknown":    {e, uuid.NewString(), codes.NotFound, "Context document not found"},
		"foreign":    {other, doc.GetId(), codes.NotFound, "Context document not found"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tc.svcEnv.svc.GetContextDocument(tc.svcEnv.ctx, &scanv1.GetContextDocumentRequest{Id: tc.id})
			requireStatus(t, err, tc.code, tc.msg)
		})
	}
	otherList, err := other.svc.ListContextDocuments(other.ctx, &scanv1.ListContextDocumentsRequest{})
	require.NoError(t, err)
	require.Zero(t, otherList.GetTotal())
}

// TestContextDocumentQuota: a document past the organization's count or
// size quota answers 409 with the quota's reason.
func TestContextDocumentQuota(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		quota store.DocumentQuota
		msg   string
	}{
		"count": {store.DocumentQuota{MaxCount: 2}, "the organization already has 2 context documents, the most allowed"},
		"size":  {store.DocumentQuota{MaxSize: 25}, "the organization's context documents would hold 30 characters, more than the 25 allowed"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.svc.Documents = tc.quota
			for range 2 {
				_, err := e.svc.CreateContextDocument(e.ctx, &scanv1.CreateContextDocumentRequest{Name: "d", Content: strings.Repeat("x", 10)})
				require.NoError(t, err)
			}
			_, err := e.svc.CreateContextDocument(e.ctx, &scanv1.CreateContextDocumentRequest{Name: "d", Content: strings.Repeat("x", 10)})
			requireStatus(t, err, codes.AlreadyExists, tc.msg)
			list, err := e.svc.ListContextDocuments(e.ctx, &scanv1.ListContextDocumentsRequest{})
			require.NoError(t, err)
			require.Equal(t, int32(2), list.GetTotal())
		})
	}
}
