# A "training" process with two fork-mode DataLoader workers; prints the workers' pids.
import os, sys, time
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        time.sleep(120)
        os._exit(0)
    kids.append(pid)
print(" ".join(map(str, kids)), flush=True)
time.sleep(120)
