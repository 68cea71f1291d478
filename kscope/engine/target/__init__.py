"""What runs: the user's file and target, their own modules imported afresh, and the step around
the target (a training step, or inference under no_grad)."""
