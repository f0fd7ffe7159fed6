package metrics

import (
	"slices"
	"sync"
	"testing"
	"time"
)

func TestSeriesConcurrentAdds(t *testing.T) {
	start := time.Now()
	s := NewSeries(start)
	const workers, perWorker, seconds = 8, 5000, 300
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				sec := i % seconds
				s.Add(time.Duration(sec)*time.Second+time.Duration(w)*time.Millisecond, 1)
			}
		}()
	}
	wg.Wait()
	v := s.Values()
	if len(v) != seconds {
		t.Fatalf("%d seconds, want %d", len(v), seconds)
	}
	var total int64
	for sec, n := range v {
		want := int64(workers * (perWorker / seconds))
		if sec < perWorker%seconds {
			want += workers
		}
		if n != want {
			t.Fatalf("second %d: %d, want %d", sec, n, want)
		}
		total += n
	}
	if total != workers*perWorker {
		t.Errorf("total %d", total)
	}
}

func TestSeriesEdges(t *testing.T) {
	start := time.Now()
	s := NewSeries(start)
	if len(s.Values()) != 0 {
		t.Error("empty series has values")
	}
	s.Add(-time.Millisecond, 4)
	s.Add(SeriesMaxSeconds*time.Second, 5)
	s.Add(0, 2)
	s.Add(999*time.Millisecond, 3)
	s.Add(2*time.Second, 7)
	if got := s.Values(); !slices.Equal(got, []int64{5, 0, 7}) {
		t.Errorf("Values %v", got)
	}
	if got := s.ValuesUntil(start.Add(4500 * time.Millisecond)); !slices.Equal(got, []int64{5, 0, 7, 0, 0}) {
		t.Errorf("ValuesUntil %v", got)
	}
	if len(s.ValuesUntil(start.Add(-time.Second))) != 0 {
		t.Error("ValuesUntil before start not empty")
	}
	if s.Early() != 4 || s.Late() != 5 {
		t.Errorf("early %d late %d", s.Early(), s.Late())
	}
}
