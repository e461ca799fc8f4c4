"""`make bench`: every benchmark, each printing its own table."""

from bench import decode_speed

if __name__ == "__main__":
    decode_speed.main()
