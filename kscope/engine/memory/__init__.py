"""Memory a call holds: its peak, what it keeps, and the tensors that make the peak."""
