"""The compiled half: kscope's torch.compile backend, the plan while inductor compiles, the kernel
rows with inductor's bytes, graph breaks and compile errors in plain words."""
