"""What kscope knows of the machine it runs on: its peaks (memory bandwidth, FLOP/s) and the folder
where it keeps what it learns between processes."""
