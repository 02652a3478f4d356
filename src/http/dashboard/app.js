// keyward dashboard: to be written
