package lab

// brokerProcess is the process sampled as broker name's when pslab did not
// start it: that broker's container process (BrokerPIDs), else the process
// whose namespace the lab's broker side is in (BrokerPID), else none.
func (o Options) brokerProcess(name string) int {
	if pid := o.BrokerPIDs[name]; pid > 0 {
		return pid
	}
	return o.BrokerPID
}
