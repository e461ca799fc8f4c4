"""`make bench`: every benchmark, each printing its own table."""

from bench import app_latency, class_capacity, decode_speed, load_check, memory_load, viz_speed

if __name__ == "__main__":
    decode_speed.main()
    viz_speed.main()
    app_latency.main([])
    load_check.main([])
    class_capacity.main([])
    memory_load.main([])
