package redo

// WaitPrealloc waits until the segment file being made ahead (prealloc),
// if any, is made.
func (l *Log) WaitPrealloc() {
	l.writeMu.Lock()
	p := l.pre
	l.writeMu.Unlock()
	if p != nil {
		<-p.done
	}
}
