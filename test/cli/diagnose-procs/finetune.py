# Named like a Jupyter kernel; does nothing.
import time
time.sleep(120)
