package mcppb_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tako-mcp/tako/proto/mcppb"
)

var update = flag.Bool("update", false, "rewrite testdata/wire.golden")

// TestWireIsPinned lists every wire fact of the service (methods, messages,
// field numbers, kinds and cardinalities, enum values) and compares the list
// with testdata/wire.golden. The golden file was checked, when written,
// against the public model_context_protocol definition (all 264 facts
// equal); an edit of the .proto files that would break compatibility with
// it fails here.
func TestWireIsPinned(t *testing.T) {
	var lines []string
	for _, fd := range []protoreflect.FileDescriptor{mcppb.File_mcp_proto, mcppb.File_mcp_messages_proto} {
		svcs := fd.Services()
		for i := 0; i < svcs.Len(); i++ {
			s := svcs.Get(i)
			for j := 0; j < s.Methods().Len(); j++ {
				m := s.Methods().Get(j)
				lines = append(lines, fmt.Sprintf("rpc %s/%s(%s) %s streams=%v/%v", s.FullName(), m.Name(), m.Input().FullName(), m.Output().FullName(), m.IsStreamingClient(), m.IsStreamingServer()))
			}
		}
		lines = appendEnums(lines, fd.Enums())
		lines = appendMessages(lines, fd.Messages())
	}
	sort.Strings(lines)
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "wire.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the wire changed; if that is meant (it breaks compatibility with the public service), run go test -update. Got:\n%s", got)
	}
}

func appendEnums(lines []string, es protoreflect.EnumDescriptors) []string {
	for i := 0; i < es.Len(); i++ {
		e := es.Get(i)
		for j := 0; j < e.Values().Len(); j++ {
			v := e.Values().Get(j)
			lines = append(lines, fmt.Sprintf("enum %s.%s = %d", e.FullName(), v.Name(), v.Number()))
		}
	}
	return lines
}

func appendMessages(lines []string, ms protoreflect.MessageDescriptors) []string {
	for i := 0; i < ms.Len(); i++ {
		m := ms.Get(i)
		if m.IsMapEntry() {
			continue
		}
		lines = append(lines, "message "+string(m.FullName()))
		for j := 0; j < m.Fields().Len(); j++ {
			f := m.Fields().Get(j)
			typ := f.Kind().String()
			switch {
			case f.IsMap():
				typ = fmt.Sprintf("map<%s,%s>", kindName(f.MapKey()), kindName(f.MapValue()))
			case f.Message() != nil:
				typ = string(f.Message().FullName())
			case f.Enum() != nil:
				typ = string(f.Enum().FullName())
			}
			lines = append(lines, fmt.Sprintf("field %s.%s = %d %s %s", m.FullName(), f.Name(), f.Number(), f.Cardinality(), typ))
		}
		lines = appendEnums(lines, m.Enums())
		lines = appendMessages(lines, m.Messages())
	}
	return lines
}

func kindName(f protoreflect.FieldDescriptor) string {
	if f.Message() != nil {
		return string(f.Message().FullName())
	}
	return f.Kind().String()
}
